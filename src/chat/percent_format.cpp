#include "chat/percent_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "chat/strings.h"
#include "chat/template_error.h"
#include "data/utf8.h"

namespace difftx::chat {
namespace {

using K = Value::Kind;

constexpr int64_t kMaxField = 100000;  // widths and precisions beyond this are refused, not allocated

// One conversion's flags, width and precision (-1: not given).
struct Spec {
  bool left = false, plus = false, space = false, alternate = false, zero = false;
  int64_t width = -1, precision = -1;
};

// The arguments a format consumes, in Python's order.
class Arguments {
 public:
  explicit Arguments(const Value& args) : args_(args), tuple_(args.is_list() && args.is_tuple) {
    if (args.is_dict() && !args.is_namespace) mapping_ = args.dict.get();
  }
  Value next() {
    if (tuple_) {
      if (used_ >= args_.list->size()) template_fail("not enough arguments for format string");
      return (*args_.list)[used_++];
    }
    if (used_ > 0) template_fail("not enough arguments for format string");
    ++used_;
    return args_;
  }
  Value by_key(const std::string& key) const {
    if (!mapping_) template_fail("format requires a mapping");
    const Value* v = mapping_->find(key);
    if (!v) template_fail("KeyError: ", repr(Value::from(key)));
    return *v;
  }
  void finish() const {
    const size_t given = tuple_ ? args_.list->size() : 1;
    if (used_ < given && !mapping_) template_fail("not all arguments converted during string formatting");
  }

 private:
  const Value& args_;
  const bool tuple_;
  const Dict* mapping_ = nullptr;
  size_t used_ = 0;
};

Int integer_of(const Value& v, char conversion) {
  if (v.is_integral()) return v.integral();
  const bool decimal = conversion == 'd' || conversion == 'i' || conversion == 'u';
  if (v.kind == K::number && decimal) {
    if (!std::isfinite(v.number)) template_fail("cannot convert float ", python_float(v.number), " to integer");
    if (std::fabs(v.number) >= 0x1p127)
      template_fail("integer overflow in %", conversion, " (difftx's integers are 128-bit)");
    return static_cast<Int>(std::trunc(v.number));
  }
  template_fail("%", conversion, " format: ", decimal ? "a real number" : "an integer", " is required, not ",
                type_name(v));
}

std::string digits_of(Int i, char conversion) {
  if (conversion != 'x' && conversion != 'X' && conversion != 'o') return int_text(i < 0 ? -i : i);
  unsigned __int128 u = i < 0 ? -static_cast<unsigned __int128>(i) : static_cast<unsigned __int128>(i);
  const unsigned base = conversion == 'o' ? 8 : 16;
  const char* alphabet = conversion == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string reversed;
  do {
    reversed += alphabet[static_cast<unsigned>(u % base)];
    u /= base;
  } while (u != 0);
  return {reversed.rbegin(), reversed.rend()};
}

// Pads to the width: spaces before (after, with '-'), or zeros after the sign and prefix.
std::string pad(const std::string& sign_prefix, const std::string& body, const Spec& spec, bool numeric) {
  const int64_t length = static_cast<int64_t>(py_len(sign_prefix) + py_len(body));
  const size_t fill = spec.width > length ? static_cast<size_t>(spec.width - length) : 0;
  if (spec.left) return sign_prefix + body + std::string(fill, ' ');
  if (spec.zero && numeric) return sign_prefix + std::string(fill, '0') + body;
  return std::string(fill, ' ') + sign_prefix + body;
}

std::string integer_conversion(const Value& v, char conversion, const Spec& spec) {
  const Int i = integer_of(v, conversion);
  std::string digits = digits_of(i, conversion);
  if (spec.precision > static_cast<int64_t>(digits.size()))
    digits.insert(0, static_cast<size_t>(spec.precision) - digits.size(), '0');
  std::string prefix = i < 0 ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  if (spec.alternate && conversion != 'd' && conversion != 'i' && conversion != 'u')
    prefix += conversion == 'o' ? "0o" : conversion == 'X' ? "0X" : "0x";
  return pad(prefix, digits, spec, true);
}

std::string float_conversion(const Value& v, char conversion, const Spec& spec) {
  if (!v.is_number()) template_fail("must be real number, not ", type_name(v));
  std::string c_format = "%";
  if (spec.left) c_format += '-';
  if (spec.plus) c_format += '+';
  if (spec.space) c_format += ' ';
  if (spec.alternate) c_format += '#';
  if (spec.zero) c_format += '0';
  if (spec.width >= 0) c_format += std::to_string(spec.width);
  c_format += '.';
  c_format += std::to_string(spec.precision >= 0 ? spec.precision : 6);
  c_format += conversion;
  const double x = as_double(v);
  const int n = std::snprintf(nullptr, 0, c_format.c_str(), x);
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), c_format.c_str(), x);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string char_conversion(const Value& v, const Spec& spec) {
  std::string c;
  if (v.is_integral()) {
    const Int i = v.integral();
    if (i < 0 || i > 0x10ffff) template_fail("%c arg not in range(0x110000)");
    data::append_utf8(static_cast<uint32_t>(i), c);
  } else if (v.is_string() && py_len(v.text) == 1) {
    c = v.text;
  } else {
    template_fail("%c requires int or char");
  }
  return pad("", c, spec, false);
}

// The first `n` code points of s.
std::string truncated(const std::string& s, int64_t n) {
  std::string out;
  for (const std::string& c : code_points(s)) {
    if (n-- <= 0) break;
    out += c;
  }
  return out;
}

}  // namespace

std::string percent_format(const std::string& format, const Value& args) {
  Arguments arguments(args);
  std::string out;
  const size_t n = format.size();
  for (size_t i = 0; i < n; ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i == n) template_fail("incomplete format");
    std::optional<std::string> key;
    if (format[i] == '(') {
      size_t depth = 1, end = i + 1;
      for (; end < n && depth > 0; ++end) depth += format[end] == '(' ? 1 : format[end] == ')' ? -1 : 0;
      if (depth > 0) template_fail("incomplete format key");
      key = format.substr(i + 1, end - i - 2);
      i = end;
    }
    Spec spec;
    for (; i < n; ++i) {
      const char f = format[i];
      if (f == '-') spec.left = true;
      else if (f == '+') spec.plus = true;
      else if (f == ' ') spec.space = true;
      else if (f == '#') spec.alternate = true;
      else if (f == '0') spec.zero = true;
      else break;
    }
    // A width or precision: digits, or '*' taking the next argument.
    auto field = [&](const char* what) -> std::optional<int64_t> {
      int64_t x = 0;
      if (i < n && format[i] == '*') {
        ++i;
        const Value v = arguments.next();
        if (!v.is_integral()) template_fail("* wants int");
        const Int given = v.integral();
        if (given > kMaxField || given < -kMaxField) template_fail(what, " too big");
        return static_cast<int64_t>(given);
      }
      if (i == n || format[i] < '0' || format[i] > '9') return std::nullopt;
      for (; i < n && format[i] >= '0' && format[i] <= '9'; ++i)
        if ((x = x * 10 + (format[i] - '0')) > kMaxField) template_fail(what, " too big");
      return x;
    };
    if (const auto width = field("width")) {
      spec.width = *width < 0 ? -*width : *width;
      spec.left = spec.left || *width < 0;
    }
    if (i < n && format[i] == '.') {
      ++i;
      spec.precision = std::max<int64_t>(0, field("precision").value_or(0));
    }
    while (i < n && (format[i] == 'h' || format[i] == 'l' || format[i] == 'L')) ++i;
    if (i == n) template_fail("incomplete format");
    const char conversion = format[i];
    if (conversion == '%') {
      out += '%';
      continue;
    }
    const Value v = key ? arguments.by_key(*key) : arguments.next();
    switch (conversion) {
      case 's':
      case 'r': {
        const std::string text = conversion == 's' ? str(v) : repr(v);
        out += pad("", spec.precision >= 0 ? truncated(text, spec.precision) : text, spec, false);
        break;
      }
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o': out += integer_conversion(v, conversion, spec); break;
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': out += float_conversion(v, conversion, spec); break;
      case 'c': out += char_conversion(v, spec); break;
      default: {
        char code[8];
        std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned char>(conversion));
        template_fail("unsupported format character '", std::string(1, conversion), "' (", code, ") at index ",
                      py_len(format.substr(0, i)));
      }
    }
  }
  arguments.finish();
  return out;
}

}  // namespace difftx::chat
