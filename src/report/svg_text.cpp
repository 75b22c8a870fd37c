#include "report/svg_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "data/utf8.h"

namespace difftx::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Calls emit(valid_piece) for each maximal run of well-formed UTF-8 and emit(U+FFFD) for each
// byte that starts no well-formed sequence.
template <typename Emit>
void for_each_valid_piece(std::string_view text, Emit emit) {
  while (!text.empty()) {
    const size_t ok = data::valid_utf8_prefix(text);
    if (ok > 0) emit(text.substr(0, ok));
    if (ok == text.size()) break;
    emit(kReplacement);
    text.remove_prefix(ok + 1);
  }
}

// Bytes in the UTF-8 sequence that starts with lead byte c (c is the start of a valid one).
size_t sequence_length(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

// U+FFFE and U+FFFF, which XML 1.0 forbids, are EF BF BE and EF BF BF.
bool is_xml_noncharacter(std::string_view s, size_t i) {
  return i + 2 < s.size() && static_cast<unsigned char>(s[i]) == 0xEF && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
         static_cast<unsigned char>(s[i + 2]) >= 0xBE;
}

std::string strip_negative_zero(std::string s) {
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string strip_trailing_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string printf_double(const char* format, int precision, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, precision, v);
  return buffer;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for_each_valid_piece(text, [&](std::string_view piece) {
    for (size_t i = 0; i < piece.size(); ++i) {
      const char c = piece[i];
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            out += kReplacement;
          } else if (is_xml_noncharacter(piece, i)) {
            out += kReplacement;
            i += 2;
          } else {
            out += c;
          }
      }
    }
  });
  return out;
}

std::string visible_token(std::string_view token, size_t max_chars) {
  if (token.empty()) return "\xE2\x88\x85";  // U+2205 EMPTY SET
  std::vector<std::string> chars;            // one visible character each
  for_each_valid_piece(token, [&](std::string_view piece) {
    for (size_t i = 0; i < piece.size();) {
      const auto c = static_cast<unsigned char>(piece[i]);
      const size_t len = sequence_length(c);
      std::string shown;
      if (c == ' ') data::append_utf8(0xB7, shown);
      else if (c == '\n') data::append_utf8(0x21B5, shown);
      else if (c == '\t') data::append_utf8(0x21E5, shown);
      else if (c < 0x20) data::append_utf8(0x2400 + c, shown);
      else if (c == 0x7F) data::append_utf8(0x2421, shown);
      else shown = piece.substr(i, len);
      chars.push_back(std::move(shown));
      i += len;
    }
  });
  const bool cut = chars.size() > std::max<size_t>(max_chars, 1);
  if (cut) chars.resize(std::max<size_t>(max_chars, 1) - 1);
  std::string out;
  for (const auto& c : chars) out += c;
  if (cut) out += "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
  return out;
}

std::string svg_number(double v) {
  DIFFTX_CHECK(std::isfinite(v), "svg: a coordinate is not finite (", v, ")");
  return format_trimmed(v, 2);
}

std::string format_trimmed(double v, int max_decimals) {
  if (!std::isfinite(v)) return "n/a";
  return strip_negative_zero(strip_trailing_zeros(printf_double("%.*f", max_decimals, v)));
}

std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  return strip_negative_zero(printf_double("%.*f", decimals, v));
}

std::string format_significant(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  const double magnitude = std::fabs(v);
  if (magnitude < 1e-3 || magnitude >= 1e6) return printf_double("%.*e", digits - 1, v);
  const int decimals = std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(magnitude))));
  return strip_negative_zero(printf_double("%.*f", decimals, v));
}

std::string format_count(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double magnitude = std::fabs(v);
  const char* suffix = "";
  double scaled = v;
  if (magnitude >= 1e9) scaled = v / 1e9, suffix = "G";
  else if (magnitude >= 1e6) scaled = v / 1e6, suffix = "M";
  else if (magnitude >= 1e3) scaled = v / 1e3, suffix = "k";
  return strip_trailing_zeros(format_significant(scaled, 3)) + suffix;
}

std::string format_grouped(double v) {
  if (!std::isfinite(v)) return "n/a";
  std::string digits = format_fixed(std::fabs(std::round(v)), 0);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(digits.begin() + i, ',');
  if (v <= -0.5) digits.insert(digits.begin(), '-');
  return digits;
}

}  // namespace difftx::report
