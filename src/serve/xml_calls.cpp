#include "serve/xml_calls.h"

#include <algorithm>
#include <cctype>

#include "serve/json_call.h"
#include "serve/openai_response.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
namespace types = grammar::json_types;

constexpr std::string_view kFunctionOpen = "<function=", kFunctionClose = "</function>";

// A tag's name, up to its '>' (i moving past it): no newline.
Scan read_tag_name(std::string_view text, size_t& i, std::string& name) {
  const size_t end = text.find_first_of(">\n", i);
  if (end == std::string_view::npos) return Scan::more;
  if (text[end] == '\n') return Scan::bad;
  name = std::string(text.substr(i, end - i));
  i = end + 1;
  return Scan::done;
}

const ToolFunction* function_named(const std::vector<ToolFunction>& functions, const std::string& name) {
  const auto f =
      std::find_if(functions.begin(), functions.end(), [&](const ToolFunction& g) { return g.name == name; });
  return f == functions.end() ? nullptr : &*f;
}

// The types a parameter's value may have (xml_calls.h).
int parameter_types(const ToolFunction* f, const std::string& name) {
  if (!f || !f->parameters.is_object()) return types::string;
  const ordered_json& p = f->parameters;
  if (const auto props = p.find("properties"); props != p.end() && props->is_object())
    if (const auto it = props->find(name); it != props->end()) return grammar::schema_types(*it, p);
  if (const auto extra = p.find("additionalProperties"); extra != p.end() && extra->is_object())
    return grammar::schema_types(*extra, p);
  return types::string;
}

// A value's raw text read by its types, as JSON text (xml_calls.h).
std::string parameter_value(std::string_view raw, int allowed) {
  std::string lower(raw);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if ((allowed & types::null) && lower == "null") return "null";
  if (allowed & types::string) return dump_json(std::string(raw));
  if ((allowed & types::boolean) && (lower == "true" || lower == "false")) return lower;
  if (const ordered_json v = ordered_json::parse(raw, nullptr, false);
      !v.is_discarded() && (grammar::value_types(v) & allowed))
    return json_without_space(raw);
  if (allowed & (types::object | types::array)) {
    ordered_json v;
    size_t i = skip_python_space(raw, 0);
    if (read_python_literal(raw, i, v) == Scan::done && skip_python_space(raw, i) == raw.size() &&
        (grammar::value_types(v) & allowed))
      return dump_ordered_json(v);
  }
  return dump_json(std::string(raw));
}

// The raw text of a value at t[i] up to `close`, i moving past that. Where no string is allowed, a
// JSON string, object or array ends where its brackets close: a string inside may hold `close`.
Scan read_raw_value(std::string_view t, size_t& i, std::string_view close, int allowed, std::string_view& raw) {
  size_t from = skip_json_space(t, i);
  if ((allowed & types::string) || from >= t.size() || (t[from] != '{' && t[from] != '[' && t[from] != '"') ||
      skip_json_value(t, from) == Scan::bad)
    from = i;
  const size_t end = t.find(close, from);
  if (end == std::string_view::npos) return Scan::more;
  raw = t.substr(i, end - i);
  i = end + close.size();
  return Scan::done;
}

}  // namespace

Scan read_xml_call(std::string_view t, size_t& i, ToolCall& call, const std::vector<ToolFunction>& functions) {
  call = {};
  if (const Scan s = expect(t, i, kFunctionOpen); s != Scan::done) return s;
  std::string name;
  if (const Scan s = read_tag_name(t, i, name); s != Scan::done) return s;
  if (name.empty()) return Scan::bad;
  const ToolFunction* f = function_named(functions, name);
  call.name = std::move(name);
  call.arguments = '{';  // the object written as its members come: a prefix of the finished one
  for (;;) {
    i = skip_json_space(t, i);
    if (const Scan s = expect(t, i, kFunctionClose); s != Scan::bad) {
      if (s == Scan::more) return s;
      call.arguments += "}";
      return Scan::done;
    }
    std::string key;
    if (const Scan s = expect(t, i, kXmlParameterOpen); s != Scan::done) return s;
    if (const Scan s = read_tag_name(t, i, key); s != Scan::done) return s;
    const int allowed = parameter_types(f, key);
    std::string_view raw;
    if (const Scan s = read_raw_value(t, i, kXmlParameterClose, allowed, raw); s != Scan::done) return s;
    if (raw.starts_with('\n')) raw.remove_prefix(1);
    if (raw.ends_with('\n')) raw.remove_suffix(1);
    add_argument(call.arguments, key, parameter_value(raw, allowed));
  }
}

Scan read_glm_call(std::string_view t, size_t& i, ToolCall& call, const std::vector<ToolFunction>& functions) {
  call = {};
  const size_t end = t.find_first_of("\n<", i);
  if (end == std::string_view::npos) return Scan::more;
  if (!valid_function_name(t.substr(i, end - i))) return Scan::bad;
  call.name = std::string(t.substr(i, end - i));
  const ToolFunction* f = function_named(functions, call.name);
  call.arguments = '{';  // the object written as its members come: a prefix of the finished one
  for (i = end;;) {
    i = skip_json_space(t, i);
    if (const Scan s = expect(t, i, kGlmKeyOpen); s != Scan::done) {
      if (s == Scan::more) return s;
      call.arguments += "}";  // what follows is no pair: the caller reads it
      return Scan::done;
    }
    const size_t key_end = t.find('<', i);
    if (key_end == std::string_view::npos) return Scan::more;
    const std::string key(t.substr(i, key_end - i));
    i = key_end;
    if (const Scan s = expect(t, i, kGlmKeyClose); s != Scan::done) return s;
    i = skip_json_space(t, i);
    if (const Scan s = expect(t, i, kGlmValueOpen); s != Scan::done) return s;
    const int allowed = parameter_types(f, key);
    std::string_view raw;
    if (const Scan s = read_raw_value(t, i, kGlmValueClose, allowed, raw); s != Scan::done) return s;
    if (!(allowed & types::string)) {
      const size_t first = skip_json_space(raw, 0), last = raw.find_last_not_of(" \t\r\n");
      raw = first < raw.size() ? raw.substr(first, last + 1 - first) : std::string_view();
    }
    add_argument(call.arguments, key, parameter_value(raw, allowed));
  }
}

}  // namespace difftx::serve
