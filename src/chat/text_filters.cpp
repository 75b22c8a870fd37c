#include "chat/text_filters.h"

#include <cstdio>

#include "chat/access.h"
#include "chat/strings.h"
#include "chat/template_error.h"

namespace difftx::chat {

Value truncate(const Value& v, const CallArgs& a) {
  if (v.is_undefined()) return v;
  if (!v.is_string()) template_fail("truncate needs a string, not ", type_name(v));
  const int64_t length = int_argument(a, 0, "length", 255);
  const bool killwords = bool_argument(a, 1, "killwords", false);
  const std::string end = string_argument(a, 2, "end").value_or("...");
  const int64_t leeway = int_argument(a, 3, "leeway", 5);  // jinja2's policy truncate.leeway
  const auto end_length = static_cast<int64_t>(py_len(end));
  if (length < end_length) template_fail("expected length >= ", end_length, ", got ", length);
  if (leeway < 0) template_fail("expected leeway >= 0, got ", leeway);
  const std::vector<std::string> cps = code_points(v.text);
  if (static_cast<int64_t>(cps.size()) <= length + leeway) return v;
  std::string head;
  for (int64_t i = 0; i < length - end_length; ++i) head += cps[static_cast<size_t>(i)];
  if (!killwords) head = head.substr(0, std::min(head.size(), head.rfind(' ')));  // rsplit(' ', 1)[0]
  return Value::from(head + end);
}

Value filesizeformat(const Value& v, const CallArgs& a) {
  const bool binary = bool_argument(a, 0, "binary", false);
  double bytes;  // float(value)
  if (v.is_number()) {
    bytes = as_double(v);
  } else if (!v.is_string()) {
    template_fail("float() argument must be a string or a real number, not '", type_name(v), "'");
  } else if (const auto d = parse_float(py_strip(v.text, std::nullopt, true, true))) {
    bytes = *d;
  } else {
    template_fail("could not convert string to float: ", repr(v));
  }
  if (bytes == 1) return Value::from(std::string("1 Byte"));
  const double base = binary ? 1024 : 1000;
  if (bytes < base) return Value::from(int_text(int_of_float(bytes)) + " Bytes");
  static const char* const prefixes[2][8] = {{"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"},
                                             {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}};
  double unit = base;
  int i = 0;
  for (; i < 8; ++i) {
    unit *= base;  // base ** (i + 2)
    if (bytes < unit) break;
  }
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.1f %s", base * bytes / unit, prefixes[binary][std::min(i, 7)]);
  return Value::from(std::string(buf));
}

namespace {

// Python's urllib.parse.quote of the UTF-8 bytes, as jinja2's url_quote calls it: letters, digits
// and _.-~ (and / in a path) stay; in a query string a space is +.
std::string url_quote(const Value& v, bool query) {
  static const char* const hex = "0123456789ABCDEF";
  std::string out;
  for (const char ch : v.is_string() ? v.text : str(v)) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
        c == '-' || c == '~' || (c == '/' && !query)) {
      out += ch;
    } else if (c == ' ' && query) {
      out += '+';
    } else {
      out += {'%', hex[c >> 4], hex[c & 15]};
    }
  }
  return out;
}

}  // namespace

Value urlencode(const Value& v, const CallArgs&) {
  if (!v.is_undefined() && !v.is_list() && !v.is_dict()) return Value::from(url_quote(v, false));
  std::string out;
  for (const Value& key : iterate(v)) {
    Value pair = key;
    if (v.is_dict()) {
      pair = Value::tuple(List{key, *v.dict->find(key.text)});
    } else if (!key.is_list() && !key.is_string() && !key.is_dict()) {
      template_fail("cannot unpack non-iterable ", type_name(key), " object");
    }
    const List kv = iterate(pair);
    if (kv.size() > 2) template_fail("too many values to unpack (expected 2)");
    if (kv.size() < 2) template_fail("not enough values to unpack (expected 2, got ", kv.size(), ")");
    if (!out.empty()) out += '&';
    out += url_quote(kv[0], true);
    out += '=';
    out += url_quote(kv[1], true);
  }
  return Value::from(out);
}

}  // namespace difftx::chat
