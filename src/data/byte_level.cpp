#include "data/byte_level.h"

#include <array>
#include <cstdint>

#include "data/utf8.h"

namespace difftx::data {
namespace {

// Bytes that stand for themselves: '!'..'~', U+00A1..U+00AC, U+00AE..U+00FF.
bool printable(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); }

struct Alphabet {
  std::array<uint32_t, 256> char_of{};  // byte -> code point
  std::array<int16_t, 512> byte_of{};   // code point (< 512) -> byte, -1 when none
  Alphabet() {
    byte_of.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      char_of[b] = printable(b) ? static_cast<uint32_t>(b) : next++;
      byte_of[char_of[b]] = static_cast<int16_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) append_utf8(alphabet().char_of[b], out);
  return out;
}

std::optional<std::string> byte_level_decode(std::string_view text) {
  if (valid_utf8_prefix(text) != text.size()) return std::nullopt;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    uint32_t cp = 0;
    if (c < 0x80) {
      cp = c;
      i += 1;
    } else if ((c & 0xE0) == 0xC0) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      return std::nullopt;  // three- and four-byte characters are all outside the alphabet
    }
    if (cp >= alphabet().byte_of.size() || alphabet().byte_of[cp] < 0) return std::nullopt;
    out += static_cast<char>(alphabet().byte_of[cp]);
  }
  return out;
}

}  // namespace difftx::data
