// Standard base64 (RFC 4648, '+' and '/', '=' padding), as the .tiktoken format uses it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace difftx::data {

std::string base64_encode(std::string_view bytes);
// nullopt unless text is canonical padded base64 (length a multiple of 4, valid alphabet,
// padding only at the end, unused bits zero).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace difftx::data
