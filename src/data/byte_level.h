// The byte-level alphabet of GPT-2 and of Hugging Face's ByteLevel pre-tokenizer and decoder:
// each of the 256 bytes stands for one printable Unicode character (the printable Latin-1
// bytes for themselves, the others for U+0100 onwards in byte order), so that a vocabulary of
// byte strings can be written as JSON text. tokenizer.json stores its vocab and merges in it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace difftx::data {

// The UTF-8 text of the characters standing for these bytes.
std::string byte_level_encode(std::string_view bytes);

// Back to bytes; nullopt when the text is not valid UTF-8 or holds a character outside the
// alphabet.
std::optional<std::string> byte_level_decode(std::string_view text);

}  // namespace difftx::data
