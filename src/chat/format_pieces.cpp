#include "chat/format_pieces.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/strings.h"
#include "chat/template_error.h"
#include "data/utf8.h"

namespace difftx::chat {

void check_format_field(Int value, const char* what) {
  if (value > kMaxFormatField || value < -kMaxFormatField)
    template_fail(what, " too big (difftx stops at ", kMaxFormatField, ")");
}

std::optional<int64_t> format_field_digits(const std::string& s, size_t& i, const char* what) {
  if (i == s.size() || s[i] < '0' || s[i] > '9') return std::nullopt;
  int64_t x = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    x = x * 10 + (s[i] - '0');
    check_format_field(x, what);
  }
  return x;
}

std::string magnitude_digits(Int i, int base, bool upper) {
  unsigned __int128 u = i < 0 ? -static_cast<unsigned __int128>(i) : static_cast<unsigned __int128>(i);
  const char* alphabet = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string reversed;
  do {
    reversed += alphabet[static_cast<unsigned>(u % static_cast<unsigned>(base))];
    u /= static_cast<unsigned>(base);
  } while (u != 0);
  return {reversed.rbegin(), reversed.rend()};
}

bool negative_float(double x) { return std::signbit(x) && !std::isnan(x); }

std::string float_digits(double x, char conversion, int64_t precision, bool alternate) {
  const bool upper = conversion == 'E' || conversion == 'F' || conversion == 'G';
  if (std::isinf(x)) return upper ? "INF" : "inf";
  if (std::isnan(x)) return upper ? "NAN" : "nan";
  if (conversion == 'g' || conversion == 'G')
    return general_digits(x, precision, alternate, upper, std::max<int64_t>(precision, 1));
  const std::string format = std::string(alternate ? "%#.*" : "%.*") + conversion;
  const int p = static_cast<int>(precision);
  const int n = std::snprintf(nullptr, 0, format.c_str(), p, std::fabs(x));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format.c_str(), p, std::fabs(x));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string general_digits(double x, int64_t precision, bool alternate, bool upper, int64_t exponent_from) {
  const char e = upper ? 'E' : 'e';
  const int64_t significant = std::max<int64_t>(precision, 1);
  std::string text = float_digits(x, e, significant - 1, alternate);
  const size_t at = text.find(e);
  if (at == std::string::npos) return text;  // inf, nan
  const int64_t exponent = std::stoll(text.substr(at + 1));
  if (exponent >= -4 && exponent < exponent_from) text = float_digits(x, 'f', significant - 1 - exponent, alternate);
  if (alternate) return text;
  const size_t end = std::min(text.find(e), text.size());
  std::string number = text.substr(0, end);
  if (number.find('.') != std::string::npos) {
    while (number.back() == '0') number.pop_back();
    if (number.back() == '.') number.pop_back();
  }
  return number + text.substr(end);
}

std::string code_point_text(Int i) {
  if (i < 0 || i > 0x10ffff) template_fail("%c arg not in range(0x110000)");
  std::string c;
  data::append_utf8(static_cast<uint32_t>(i), c);
  return c;
}

std::string first_code_points(const std::string& s, int64_t n) {
  std::string out;
  for (const std::string& c : code_points(s)) {
    if (n-- <= 0) break;
    out += c;
  }
  return out;
}

std::string aligned(const std::string& s, int64_t width, char align, const std::string& fill) {
  const int64_t length = static_cast<int64_t>(py_len(s));
  if (width <= length) return s;
  const int64_t padding = width - length;
  const int64_t before = align == '>' ? padding : align == '^' ? padding / 2 : 0;
  std::string out;
  for (int64_t k = 0; k < before; ++k) out += fill;
  out += s;
  for (int64_t k = before; k < padding; ++k) out += fill;
  return out;
}

void append_text(std::string& out, const std::string& piece) {
  if (out.size() + piece.size() > kMaxTextBytes)
    template_fail("a formatted string passed ", kMaxTextBytes >> 20, " MiB (difftx stops there)");
  out += piece;
}

}  // namespace difftx::chat
