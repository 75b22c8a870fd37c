// After CPython's Python/formatter_unicode.c: the spec parser, the checks of each type (their messages
// are Python's), and the number layout with its grouping and zero padding.
#include "chat/format_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <vector>

#include "chat/format_pieces.h"
#include "chat/strings.h"
#include "chat/template_error.h"

namespace difftx::chat {
namespace {

using K = Value::Kind;

struct Spec {
  std::string fill = " ";  // one code point
  char align = 0;          // '<', '>', '^' or '=' (after the sign and prefix)
  char sign = 0;           // '+', '-' or ' '
  bool no_negative_zero = false, alternate = false;
  int64_t width = -1, precision = -1;
  char grouping = 0;  // ',' or '_'
  std::string type;   // one code point, or empty
};

// A code point as Python's format errors name it: itself when it is printable ASCII, else \x and hex.
std::string named(const std::string& c) {
  if (c.size() == 1 && c[0] > 32) return c;
  char hex[16];
  std::snprintf(hex, sizeof hex, "\\x%x", c.empty() ? 0u : code_point_value(c));
  return hex;
}

[[noreturn]] void unknown_code(const Spec& spec, const Value& v) {
  template_fail("Unknown format code '", named(spec.type), "' for object of type '", type_name(v), "'");
}

bool is_one_of(const std::string& type, std::initializer_list<const char*> types) {
  return std::any_of(types.begin(), types.end(), [&](const char* t) { return type == t; });
}

// Python's parse_internal_render_format_spec, with the type's defaults.
Spec parse_spec(const std::string& text, const Value& v, const char* default_type, char default_align) {
  Spec spec;
  spec.type = default_type;
  spec.align = default_align;
  auto is_align = [](const std::string& c) { return c == "<" || c == ">" || c == "=" || c == "^"; };
  const std::vector<std::string> head = code_points(text.substr(0, 5));  // a fill of up to 4 bytes, the align
  size_t i = 0;
  bool fill_given = false, align_given = false;
  if (head.size() >= 2 && is_align(head[1])) {
    spec.fill = head[0];
    spec.align = head[1][0];
    fill_given = align_given = true;
    i = head[0].size() + 1;
  } else if (!head.empty() && is_align(head[0])) {
    spec.align = head[0][0];
    align_given = true;
    i = 1;
  }
  const size_t n = text.size();
  if (i < n && (text[i] == '+' || text[i] == '-' || text[i] == ' ')) spec.sign = text[i++];
  if (i < n && text[i] == 'z') {
    spec.no_negative_zero = true;
    ++i;
  }
  if (i < n && text[i] == '#') {
    spec.alternate = true;
    ++i;
  }
  if (!fill_given && i < n && text[i] == '0') {  // 0-padding: the fill, and '=' unless aligned otherwise
    spec.fill.assign(1, '0');
    if (!align_given && default_align == '>') spec.align = '=';
    ++i;
  }
  spec.width = format_field_digits(text, i, "width").value_or(-1);
  if (i < n && text[i] == ',') spec.grouping = text[i++];
  if (i < n && text[i] == '_') {
    if (spec.grouping) template_fail("Cannot specify both ',' and '_'.");
    spec.grouping = text[i++];
  }
  if (i < n && text[i] == ',' && spec.grouping == '_') template_fail("Cannot specify both ',' and '_'.");
  if (i < n && text[i] == '.') {
    const auto precision = format_field_digits(text, ++i, "precision");
    if (!precision) template_fail("Format specifier missing precision");
    spec.precision = *precision;
  }
  const std::string rest = text.substr(i);
  if (py_len(rest) > 1)
    template_fail("Invalid format specifier '", text, "' for object of type '", type_name(v), "'");
  if (!rest.empty()) spec.type = rest;
  if (spec.grouping && !is_one_of(spec.type, {"d", "e", "f", "g", "E", "G", "%", "F", ""}) &&
      !(spec.grouping == '_' && is_one_of(spec.type, {"b", "o", "x", "X"})))
    template_fail("Cannot specify '", std::string(1, spec.grouping), "' with '", named(spec.type), "'.");
  return spec;
}

// Digits with the spec's grouping (every 3, or every 4 for '_' in bases 2, 8 and 16), zero-padded to
// min_width as Python's _PyUnicode_InsertThousandsGrouping pads them (separators among the zeros too,
// never one first).
std::string grouped(const std::string& digits, const std::string& separator, int64_t size, int64_t min_width) {
  if (digits.empty()) return "";  // %c and inf/nan: no digits, the padding stands apart
  std::vector<std::string> groups;  // from the right
  int64_t remaining = static_cast<int64_t>(digits.size()), left = min_width;
  bool done = false;
  while (!separator.empty()) {
    const int64_t l = std::min(size, std::max({remaining, left, int64_t{1}}));
    const int64_t taken = std::min(remaining, l);
    groups.push_back(std::string(static_cast<size_t>(l - taken), '0') +
                     digits.substr(static_cast<size_t>(remaining - taken), static_cast<size_t>(taken)));
    remaining -= taken;
    left -= l;
    if (remaining <= 0 && left <= 0) {
      done = true;
      break;
    }
    left -= static_cast<int64_t>(separator.size());
  }
  if (!done) {
    const int64_t l = std::max({remaining, left, int64_t{1}});
    groups.push_back(std::string(static_cast<size_t>(l - remaining), '0') +
                     digits.substr(0, static_cast<size_t>(remaining)));
  }
  std::string out;
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) out += (it == groups.rbegin() ? "" : separator) + *it;
  return out;
}

// A number laid out as Python's calc_number_widths and fill_number do:
// [padding][sign][prefix][padding][grouped digits][rest: decimal point, fraction, exponent][padding].
std::string lay_out(const Spec& spec, bool negative, const std::string& prefix, const std::string& digits,
                    const std::string& rest, int64_t group_size = 3) {
  const std::string sign = negative ? "-" : spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
  const int64_t others = static_cast<int64_t>(sign.size() + prefix.size() + py_len(rest));  // not digits
  const int64_t min_width = spec.fill == "0" && spec.align == '=' ? spec.width - others : 0;
  const std::string separator = spec.grouping ? std::string(1, spec.grouping) : "";
  const std::string body = grouped(digits, separator, group_size, min_width);
  const std::string lead = sign + prefix;
  if (spec.align == '=')  // the padding between the sign and prefix and the digits
    return lead + aligned(body + rest, spec.width - static_cast<int64_t>(lead.size()), '>', spec.fill);
  return aligned(lead + body + rest, spec.width, spec.align, spec.fill);
}

// |x| with no type and a precision: 'g' that switches to an exponent one digit sooner and keeps a
// ".0" on a whole number (Python's Py_DTSF_ADD_DOT_0).
std::string general_with_dot(double x, int64_t precision, bool alternate) {
  const std::string text = general_digits(x, precision, alternate, false, std::max<int64_t>(precision, 1) - 1);
  return std::isfinite(x) && text.find_first_of(".e") == std::string::npos ? text + ".0" : text;
}

std::string format_float(double x, const Spec& spec) {
  std::string t = spec.type;
  const bool percent = t == "%";
  if (percent) x *= 100;
  std::string text;  // |x|
  if (t.empty() && spec.precision < 0) {
    text = python_float(std::fabs(x));
    if (spec.alternate && std::isfinite(x) && text.find('.') == std::string::npos) text.insert(text.find('e'), ".");
  } else if (t.empty()) {
    text = general_with_dot(x, spec.precision, spec.alternate);
  } else {
    text = float_digits(x, percent ? 'f' : t == "n" ? 'g' : t[0], spec.precision >= 0 ? spec.precision : 6,
                        spec.alternate);
  }
  if (percent) text += '%';
  const size_t digits = text.find_first_not_of("0123456789");
  bool negative = negative_float(x);
  if (spec.no_negative_zero && negative) {  // z: a result that rounded to zero drops its sign
    const std::string shown = text.substr(0, text.find_first_of("eE%"));
    negative = shown.find_first_not_of("0.") != std::string::npos;
  }
  return lay_out(spec, negative, "", text.substr(0, digits), digits == std::string::npos ? "" : text.substr(digits));
}

std::string format_int(Int i, const std::string& text, const Value& v) {
  const Spec spec = parse_spec(text, v, "d", '>');
  const std::string& t = spec.type;
  if (is_one_of(t, {"e", "E", "f", "F", "g", "G", "%"})) return format_float(static_cast<double>(i), spec);
  if (!is_one_of(t, {"b", "c", "d", "o", "x", "X", "n"})) unknown_code(spec, v);
  if (spec.precision >= 0) template_fail("Precision not allowed in integer format specifier");
  if (spec.no_negative_zero) template_fail("Negative zero coercion (z) not allowed in integer format specifier");
  if (t == "c") {
    if (spec.sign) template_fail("Sign not allowed with integer format specifier 'c'");
    if (spec.alternate) template_fail("Alternate form (#) not allowed with integer format specifier 'c'");
    return lay_out(spec, false, "", "", code_point_text(i));
  }
  const int base = t == "b" ? 2 : t == "o" ? 8 : t == "x" || t == "X" ? 16 : 10;
  const std::string prefix = spec.alternate && base != 10 ? "0" + t : "";  // 0b, 0o, 0x, 0X
  return lay_out(spec, i < 0, prefix, magnitude_digits(i, base, t == "X"), "", base == 10 ? 3 : 4);
}

std::string format_string(const std::string& s, const std::string& text, const Value& v) {
  const Spec spec = parse_spec(text, v, "s", '<');
  if (spec.type != "s") unknown_code(spec, v);
  if (spec.sign) template_fail(spec.sign == ' ' ? "Space" : "Sign", " not allowed in string format specifier");
  if (spec.no_negative_zero) template_fail("Negative zero coercion (z) not allowed in string format specifier");
  if (spec.alternate) template_fail("Alternate form (#) not allowed in string format specifier");
  if (spec.align == '=') template_fail("'=' alignment not allowed in string format specifier");
  return aligned(spec.precision >= 0 ? first_code_points(s, spec.precision) : s, spec.width, spec.align, spec.fill);
}

}  // namespace

std::string format_value(const Value& v, const std::string& spec) {
  if (spec.empty()) return str(v);
  switch (v.kind) {
    case K::string: return format_string(v.text, spec, v);
    case K::integer:
    case K::boolean: return format_int(v.integral(), spec, v);
    case K::number: {
      const Spec parsed = parse_spec(spec, v, "", '>');
      if (!is_one_of(parsed.type, {"", "e", "E", "f", "F", "g", "G", "n", "%"})) unknown_code(parsed, v);
      return format_float(v.number, parsed);
    }
    default: template_fail("unsupported format string passed to ", type_name(v), ".__format__");
  }
}

}  // namespace difftx::chat
