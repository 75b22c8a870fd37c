#include "chat/percent_format.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "chat/format_pieces.h"
#include "chat/strings.h"
#include "chat/template_error.h"

namespace difftx::chat {
namespace {

using K = Value::Kind;

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
  if (v.kind == K::number && decimal) return int_of_float(v.number);
  template_fail("%", conversion, " format: ", decimal ? "a real number" : "an integer", " is required, not ",
                type_name(v));
}

// Pads to the width: spaces before (after, with '-'), or zeros after the sign and prefix.
std::string pad(const std::string& sign_prefix, const std::string& body, const Spec& spec, bool numeric) {
  if (!spec.zero || !numeric || spec.left) return aligned(sign_prefix + body, spec.width, spec.left ? '<' : '>', " ");
  const int64_t length = static_cast<int64_t>(py_len(sign_prefix) + py_len(body));
  return sign_prefix + std::string(static_cast<size_t>(std::max<int64_t>(0, spec.width - length)), '0') + body;
}

std::string integer_conversion(const Value& v, char conversion, const Spec& spec) {
  const Int i = integer_of(v, conversion);
  const int base = conversion == 'o' ? 8 : conversion == 'x' || conversion == 'X' ? 16 : 10;
  std::string digits = magnitude_digits(i, base, conversion == 'X');
  if (spec.precision > static_cast<int64_t>(digits.size()))
    digits.insert(0, static_cast<size_t>(spec.precision) - digits.size(), '0');
  std::string prefix = i < 0 ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  if (spec.alternate && conversion != 'd' && conversion != 'i' && conversion != 'u')
    prefix += conversion == 'o' ? "0o" : conversion == 'X' ? "0X" : "0x";
  return pad(prefix, digits, spec, true);
}

std::string float_conversion(const Value& v, char conversion, const Spec& spec) {
  if (!v.is_number()) template_fail("must be real number, not ", type_name(v));
  const double x = as_double(v);
  const std::string sign = negative_float(x) ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  return pad(sign, float_digits(x, conversion, spec.precision >= 0 ? spec.precision : 6, spec.alternate), spec, true);
}

std::string char_conversion(const Value& v, const Spec& spec) {
  std::string c;
  if (v.is_integral()) c = code_point_text(v.integral());
  else if (v.is_string() && py_len(v.text) == 1) c = v.text;
  else template_fail("%c requires int or char");
  return pad("", c, spec, false);
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
      if (i == n || format[i] != '*') return format_field_digits(format, i, what);
      ++i;
      const Value v = arguments.next();
      if (!v.is_integral()) template_fail("* wants int");
      check_format_field(v.integral(), what);
      return static_cast<int64_t>(v.integral());
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
      case 'r':
      case 'a': {
        const std::string text = conversion == 's' ? str(v) : conversion == 'r' ? repr(v) : ascii(v);
        append_text(out, pad("", spec.precision >= 0 ? first_code_points(text, spec.precision) : text, spec, false));
        break;
      }
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o': append_text(out, integer_conversion(v, conversion, spec)); break;
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': append_text(out, float_conversion(v, conversion, spec)); break;
      case 'c': append_text(out, char_conversion(v, spec)); break;
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
