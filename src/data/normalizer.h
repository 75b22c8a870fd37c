// The text normalizers of tokenizer.json that difftx applies (Qwen 2/3 use NFC), by ICU.
#pragma once
#include <string>
#include <string_view>

namespace difftx::data {

enum class Normalization { none, nfc };

// The normalized text: text itself when normalization leaves it unchanged, else a view of
// buffer. Text must be valid UTF-8.
std::string_view normalize(Normalization n, std::string_view text, std::string& buffer);

}  // namespace difftx::data
