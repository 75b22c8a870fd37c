#include "serve/json_call.h"

#include <nlohmann/json.hpp>

#include "serve/openai_response.h"

namespace difftx::serve {
namespace {

using nlohmann::json;

bool space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

bool scalar_byte(char c) {  // of a number or a literal: checked by json::parse later
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E';
}

// The length of a UTF-8 character cut short at the end of `t` (0 when none is).
size_t cut_character(std::string_view t) {
  for (size_t back = 1; back <= std::min<size_t>(3, t.size()); ++back) {
    const auto c = static_cast<unsigned char>(t[t.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

// A parsed JSON value, or a discarded one when the text is not JSON.
json parsed(std::string_view text) { return json::parse(text, nullptr, false); }

}  // namespace

Scan expect(std::string_view t, size_t& i, std::string_view literal) {
  const std::string_view rest = t.substr(std::min(i, t.size()));
  if (rest.substr(0, literal.size()) == literal) {
    i += literal.size();
    return Scan::done;
  }
  return rest.size() < literal.size() && literal.substr(0, rest.size()) == rest ? Scan::more : Scan::bad;
}

size_t skip_json_space(std::string_view t, size_t i) {
  while (i < t.size() && space(t[i])) ++i;
  return i;
}

Scan skip_json_value(std::string_view t, size_t& i) {
  if (i >= t.size()) return Scan::more;
  const char first = t[i];
  if (first != '{' && first != '[' && first != '"') {
    if (!scalar_byte(first)) return Scan::bad;
    while (i < t.size() && scalar_byte(t[i])) ++i;
    return i < t.size() ? Scan::done : Scan::more;  // a number may go on
  }
  int depth = 0;
  bool in_string = false;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) return ++i, Scan::done;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 256) return Scan::bad;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return ++i, Scan::done;
    }
  }
  return Scan::more;
}

std::string json_without_space(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  bool in_string = false, escaped = false;
  for (const char c : t) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (space(c)) {
      continue;
    }
    out += c;
  }
  out.resize(out.size() - cut_character(out));
  return out;
}

void add_argument(std::string& arguments, const std::string& key, std::string_view value_json) {
  if (arguments.size() > 1) arguments += ',';  // after "{" and a member
  arguments += dump_json(key);
  arguments += ':';
  arguments += value_json;
}

std::string arguments_text(std::string_view value) {
  const json v = parsed(value);
  if (v.is_object()) return json_without_space(value);
  if (!v.is_string()) return "";
  // Some models write the arguments as a JSON string.
  const std::string inner = v.get<std::string>();
  return parsed(inner).is_object() ? json_without_space(inner) : "";
}

Scan read_json_call(std::string_view t, size_t& i, ToolCall& call) {
  const size_t start = i;
  call = {};
  if (i >= t.size()) return Scan::more;
  if (t[i] != '{') return Scan::bad;
  bool has_arguments = false;
  for (i = skip_json_space(t, i + 1);; i = skip_json_space(t, i)) {
    if (i >= t.size()) return Scan::more;
    if (t[i] != '"') return Scan::bad;  // also {} and a trailing comma
    const size_t key_at = i;
    if (const Scan s = skip_json_value(t, i); s != Scan::done) return s;
    const json key = parsed(t.substr(key_at, i - key_at));
    if (!key.is_string()) return Scan::bad;
    i = skip_json_space(t, i);
    if (i >= t.size()) return Scan::more;
    if (t[i] != ':') return Scan::bad;
    i = skip_json_space(t, i + 1);
    const size_t value_at = i;
    const Scan s = skip_json_value(t, i);
    if (s == Scan::bad) return s;
    const std::string_view value = t.substr(value_at, i - value_at);
    const bool arguments = key == "arguments" || key == "parameters";
    if (s == Scan::more) {
      // The arguments so far, once the call is named: the object's text, or nothing while a
      // string holds them (its escapes would change when it is read).
      if (arguments && !call.name.empty())
        call.arguments = value.starts_with('{') ? json_without_space(value) : std::string();
      return s;
    }
    if (key == "name") {
      const json name = parsed(value);
      if (!name.is_string() || name.get<std::string>().empty()) return Scan::bad;
      call.name = name.get<std::string>();
    } else if (arguments) {
      call.arguments = arguments_text(value);
      if (call.arguments.empty()) return Scan::bad;
      has_arguments = true;
    } else if (key != "type" && key != "id") {
      return Scan::bad;  // another key: a JSON answer ({"name": "Alice", "age": 30}), not a call
    }
    i = skip_json_space(t, i);
    if (i >= t.size()) return Scan::more;
    if (t[i] == ',') {
      ++i;
      continue;
    }
    if (t[i] != '}') return Scan::bad;
    ++i;
    if (call.name.empty() || parsed(t.substr(start, i - start)).is_discarded()) return Scan::bad;
    if (!has_arguments) call.arguments = "{}";
    return Scan::done;
  }
}

}  // namespace difftx::serve
