#include "chat/value.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <unicode/uchar.h>

#include "chat/template_error.h"

namespace difftx::chat {

const Value* Dict::find(const std::string& key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  for (auto& [k, v] : items)
    if (k == key) {
      v = std::move(value);
      return;
    }
  items.emplace_back(key, std::move(value));
}

Value Value::undefined(std::string description) { return {.text = std::move(description)}; }
Value Value::none() { return {.kind = Kind::none}; }
Value Value::from(bool b) { return {.kind = Kind::boolean, .boolean = b}; }
Value Value::from(int64_t i) { return from(Int{i}); }
Value Value::from(Int i) { return {.kind = Kind::integer, .integer = i}; }
Value Value::from(double d) { return {.kind = Kind::number, .number = d}; }
Value Value::from(std::string s) {
  if (s.size() > kMaxTextBytes) template_fail("a string of ", s.size(), " bytes is too big (difftx stops at 64 MiB)");
  return {.kind = Kind::string, .text = std::move(s)};
}
Value Value::from(List items) {
  if (items.size() > kMaxListItems)
    template_fail("a list of ", items.size(), " items is too big (difftx stops at ", kMaxListItems, ")");
  return {.kind = Kind::list, .list = std::make_shared<List>(std::move(items))};
}
Value Value::tuple(List items) {
  Value v = from(std::move(items));
  v.is_tuple = true;
  return v;
}
Value Value::from(Dict items) { return {.kind = Kind::dict, .dict = std::make_shared<Dict>(std::move(items))}; }
Value Value::from(Function f) {
  return {.kind = Kind::function, .function = std::make_shared<Function>(std::move(f))};
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none: return false;
    case Value::Kind::boolean: return v.boolean;
    case Value::Kind::integer: return v.integer != 0;
    case Value::Kind::number: return v.number != 0;
    case Value::Kind::string: return !v.text.empty();
    case Value::Kind::list: return !v.list->empty();
    case Value::Kind::dict: return v.is_namespace || !v.dict->items.empty();
    case Value::Kind::function: return true;
  }
  return false;
}

std::string int_text(Int i) {
  unsigned __int128 u = i < 0 ? -static_cast<unsigned __int128>(i) : static_cast<unsigned __int128>(i);
  std::string digits;
  do {
    digits += static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  if (i < 0) digits += '-';
  return {digits.rbegin(), digits.rend()};
}

namespace {

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

bool is_decimal(char c) { return c >= '0' && c <= '9'; }

// Decimal digits from text[i] on with single underscores between them (i moves past them); false for none.
bool digit_part(const std::string& text, size_t& i) {
  if (i >= text.size() || !is_decimal(text[i])) return false;
  while (i < text.size() && (is_decimal(text[i]) || (text[i] == '_' && i + 1 < text.size() && is_decimal(text[i + 1]))))
    ++i;
  return true;
}

}  // namespace

std::optional<Int> parse_int(const std::string& text, int base) {
  const bool negative = !text.empty() && text[0] == '-';
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  bool prefixed = false;
  if (i + 1 < text.size() && text[i] == '0') {
    const char p = static_cast<char>(text[i + 1] | 0x20);
    const int named = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (named != 0 && (base == 0 || base == named)) {
      base = named;
      prefixed = true;
      i += 2;
    }
  }
  const bool no_leading_zeros = base == 0;  // base 0 without a prefix: decimal, 0 alone may start with 0
  if (base == 0) base = 10;
  if (base < 2 || base > 36 || text.empty() || text.back() == '_') return std::nullopt;
  const bool leading_zero = i < text.size() && text[i] == '0';
  const unsigned __int128 limit = static_cast<unsigned __int128>(kIntMax) + (negative ? 1 : 0);
  unsigned __int128 u = 0;
  size_t digits = 0;
  bool underscore_allowed = prefixed;  // after a prefix or a digit
  for (; i < text.size(); ++i) {
    if (text[i] == '_') {
      if (!underscore_allowed) return std::nullopt;
      underscore_allowed = false;
      continue;
    }
    const int digit = digit_value(text[i]);
    if (digit >= base) return std::nullopt;
    if (u > (limit - static_cast<unsigned>(digit)) / static_cast<unsigned>(base)) return std::nullopt;
    u = u * static_cast<unsigned>(base) + static_cast<unsigned>(digit);
    ++digits;
    underscore_allowed = true;
  }
  if (digits == 0 || (no_leading_zeros && leading_zero && u != 0)) return std::nullopt;
  return negative ? static_cast<Int>(-u) : static_cast<Int>(u);
}

std::optional<double> parse_float(const std::string& text) {
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  std::string word = text.substr(i);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word == "inf" || word == "infinity" || word == "nan") return std::strtod(text.c_str(), nullptr);
  const bool whole = digit_part(text, i);
  bool fraction = false;
  if (i < text.size() && text[i] == '.') fraction = digit_part(text, ++i);
  if (!whole && !fraction) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    if (++i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digit_part(text, i)) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  std::string plain;
  for (char c : text)
    if (c != '_') plain += c;
  return std::strtod(plain.c_str(), nullptr);
}

std::string python_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int decpt = std::stoi(sci.substr(e + 1)) + 1;
  const int n = static_cast<int>(digits.size());
  std::string out;
  if (decpt <= -4 || decpt > 16) {
    out = digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    const int exp = decpt - 1;
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  } else if (decpt <= 0) {
    out = "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (decpt >= n) {
    out = digits + std::string(static_cast<size_t>(decpt - n), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
  }
  return sign + out;
}

namespace {

// Python's str.isprintable for one code point above ASCII: not a control, format, surrogate,
// private-use, unassigned, line or paragraph separator or space character.
bool printable(uint32_t u) {
  switch (u_charType(static_cast<UChar32>(u))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR:
    case U_SPACE_SEPARATOR: return false;
    default: return true;
  }
}

// Python's repr of a str: its quote, and escapes for what is not printable (\xhh, \uhhhh, \Uhhhhhhhh).
std::string repr_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (const std::string& cp : code_points(s)) {
    const unsigned char c = static_cast<unsigned char>(cp[0]);
    const uint32_t u = code_point_value(cp);
    if (c == '\\') out += "\\\\";
    else if (c == quote) out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f || (u >= 0x80 && !printable(u))) {
      char b[16];
      std::snprintf(b, sizeof b, u < 0x100 ? "\\x%02x" : u < 0x10000 ? "\\u%04x" : "\\U%08x", u);
      out += b;
    } else {
      out += cp;
    }
  }
  return out + quote;
}

}  // namespace

std::string repr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::string: return repr_string(v.text);
    case Value::Kind::list: {
      std::string out = v.is_tuple ? "(" : "[";
      for (size_t i = 0; i < v.list->size(); ++i) out += (i ? ", " : "") + repr((*v.list)[i]);
      if (v.is_tuple) return out + (v.list->size() == 1 ? ",)" : ")");
      return out + "]";
    }
    case Value::Kind::dict: {
      if (v.is_namespace) return "<Namespace>";
      std::string out = "{";
      bool first = true;
      for (const auto& [k, x] : v.dict->items) {
        out += (first ? "" : ", ") + repr_string(k) + ": " + repr(x);
        first = false;
      }
      return out + "}";
    }
    case Value::Kind::undefined: return "Undefined";
    default: return str(v);
  }
}

std::string ascii(const Value& v) {
  std::string out;
  for (const std::string& c : code_points(repr(v))) {
    const uint32_t u = code_point_value(c);
    if (u < 0x80) {
      out += c;
      continue;
    }
    char escape[16];
    std::snprintf(escape, sizeof escape, u < 0x100 ? "\\x%02x" : u < 0x10000 ? "\\u%04x" : "\\U%08x", u);
    out += escape;
  }
  return out;
}

std::string str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return "";
    case Value::Kind::none: return "None";
    case Value::Kind::boolean: return v.boolean ? "True" : "False";
    case Value::Kind::integer: return int_text(v.integer);
    case Value::Kind::number: return python_float(v.number);
    case Value::Kind::string: return v.text;
    case Value::Kind::function: return "<function>";
    default: return repr(v);
  }
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return "Undefined";
    case Value::Kind::none: return "NoneType";
    case Value::Kind::boolean: return "bool";
    case Value::Kind::integer: return "int";
    case Value::Kind::number: return "float";
    case Value::Kind::string: return "str";
    case Value::Kind::list: return v.is_tuple ? "tuple" : "list";
    case Value::Kind::dict: return v.is_namespace ? "Namespace" : "dict";
    case Value::Kind::function: return "function";
  }
  return "object";
}

double as_double(const Value& v) {
  if (v.kind == Value::Kind::integer) return static_cast<double>(v.integer);
  if (v.kind == Value::Kind::boolean) return v.boolean ? 1 : 0;
  return v.number;
}

Int int_of_float(double d) {
  if (std::isnan(d)) template_fail("cannot convert float NaN to integer");
  if (std::isinf(d)) template_fail("cannot convert float infinity to integer");
  if (std::fabs(d) >= 0x1p127)
    template_fail("integer overflow in int(", python_float(d), ") (difftx's integers are 128-bit)");
  return static_cast<Int>(std::trunc(d));
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind != Value::Kind::number && b.kind != Value::Kind::number) {
      return a.integral() == b.integral();
    }
    return as_double(a) == as_double(b);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none: return true;
    case Value::Kind::string: return a.text == b.text;
    case Value::Kind::list:
      if (a.is_tuple != b.is_tuple || a.list->size() != b.list->size()) return false;  // (1,) != [1]
      for (size_t i = 0; i < a.list->size(); ++i)
        if (!equal((*a.list)[i], (*b.list)[i])) return false;
      return true;
    case Value::Kind::dict:
      if (a.is_namespace || b.is_namespace) return a.dict == b.dict;
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (const auto& [k, x] : a.dict->items) {
        const Value* y = b.dict->find(k);
        if (!y || !equal(x, *y)) return false;
      }
      return true;
    case Value::Kind::function: return a.function == b.function;
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Value::Kind::integer && b.kind == Value::Kind::integer) return a.integer < b.integer;
    return as_double(a) < as_double(b);
  }
  if (a.is_string() && b.is_string()) return a.text < b.text;  // UTF-8 byte order is code point order
  if (a.is_list() && b.is_list() && a.is_tuple == b.is_tuple) {
    const size_t n = std::min(a.list->size(), b.list->size());
    for (size_t i = 0; i < n; ++i) {
      if (!equal((*a.list)[i], (*b.list)[i])) return less((*a.list)[i], (*b.list)[i]);
    }
    return a.list->size() < b.list->size();
  }
  template_fail("'<' not supported between instances of '", type_name(a), "' and '", type_name(b), "'");
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
    if (i + n > s.size()) n = 1;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

uint32_t code_point_value(const std::string& c) {
  const unsigned char lead = static_cast<unsigned char>(c[0]);
  uint32_t u = c.size() == 2 ? (lead & 0x1f) : c.size() == 3 ? (lead & 0x0f) : c.size() == 4 ? (lead & 0x07) : lead;
  for (size_t k = 1; k < c.size(); ++k) u = (u << 6) | (static_cast<unsigned char>(c[k]) & 0x3f);
  return u;
}

List iterate(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return {};
    case Value::Kind::list: return *v.list;
    case Value::Kind::dict: {
      List keys;
      for (const auto& [k, x] : v.dict->items) keys.push_back(Value::from(k));
      return keys;
    }
    case Value::Kind::string: {
      List chars;
      for (auto& c : code_points(v.text)) chars.push_back(Value::from(std::move(c)));
      return chars;
    }
    default: template_fail("'", type_name(v), "' object is not iterable");
  }
}

template <typename Json>
Value from_json(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::from(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::from(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return Value::from(static_cast<Int>(j.template get<uint64_t>()));
    case nlohmann::json::value_t::number_float: return Value::from(j.template get<double>());
    case nlohmann::json::value_t::string: return Value::from(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      List items;
      for (const auto& x : j) items.push_back(from_json(x));
      return Value::from(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d.items.emplace_back(it.key(), from_json(it.value()));
      return Value::from(std::move(d));
    }
    default: return Value::none();
  }
}
template Value from_json(const nlohmann::json&);
template Value from_json(const nlohmann::ordered_json&);

namespace {

void json_string(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    char b[16];
    if (c < 0x20) {
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out += b;
    } else if ((c >= 0x7f) && ensure_ascii) {  // DEL too, as Python's json.dumps escapes it
      const std::string cp = code_points(s.substr(i, 4))[0];
      uint32_t u = code_point_value(cp);
      if (u >= 0x10000) {
        u -= 0x10000;
        std::snprintf(b, sizeof b, "\\u%04x\\u%04x", 0xd800 + (u >> 10), 0xdc00 + (u & 0x3ff));
      } else {
        std::snprintf(b, sizeof b, "\\u%04x", u);
      }
      out += b;
      i += cp.size() - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void json_value(const Value& v, const JsonStyle& style, int level, std::string& out) {
  const std::string item_sep = !style.item_separator.empty() ? style.item_separator : style.indent >= 0 ? "," : ", ";
  const std::string key_sep = !style.key_separator.empty() ? style.key_separator : ": ";
  auto newline = [&](int depth) {
    if (style.indent >= 0) out += "\n" + std::string(static_cast<size_t>(style.indent * depth), ' ');
  };
  switch (v.kind) {
    case Value::Kind::none: out += "null"; return;
    case Value::Kind::boolean: out += v.boolean ? "true" : "false"; return;
    case Value::Kind::integer: out += int_text(v.integer); return;
    case Value::Kind::number:
      if (std::isnan(v.number)) out += "NaN";
      else if (std::isinf(v.number)) out += v.number < 0 ? "-Infinity" : "Infinity";
      else out += python_float(v.number);
      return;
    case Value::Kind::string: json_string(v.text, style.ensure_ascii, out); return;
    case Value::Kind::list: {
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += item_sep;
        newline(level + 1);
        json_value((*v.list)[i], style, level + 1, out);
      }
      newline(level);
      out += ']';
      return;
    }
    case Value::Kind::dict: {
      if (v.is_namespace) break;
      if (v.dict->items.empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& item : v.dict->items) items.push_back(&item);
      if (style.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_sep;
        newline(level + 1);
        json_string(items[i]->first, style.ensure_ascii, out);
        out += key_sep;
        json_value(items[i]->second, style, level + 1, out);
      }
      newline(level);
      out += '}';
      return;
    }
    default: break;
  }
  template_fail("Object of type ", type_name(v), " is not JSON serializable");
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  json_value(v, style, 0, out);
  return out;
}

}  // namespace difftx::chat
