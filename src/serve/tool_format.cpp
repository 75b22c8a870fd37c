#include "serve/tool_format.h"

#include <algorithm>

#include "core/enum_names.h"

namespace difftx::serve {
namespace {

using grammar::ByteSet;
using grammar::Element;
using grammar::GrammarBuilder;
using grammar::Sequence;
using nlohmann::json;

constexpr std::string_view kHermesOpen = "<tool_call>", kHermesClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMistralOpen = "[TOOL_CALLS]";

constexpr EnumName<ToolFormat> kToolFormatNames[] = {
    {ToolFormat::hermes, "hermes"}, {ToolFormat::llama3_json, "llama3_json"}, {ToolFormat::mistral, "mistral"}};

bool space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
size_t skip_space(std::string_view t, size_t i) {
  while (i < t.size() && space(t[i])) ++i;
  return i;
}

// Where the JSON object or array starting at `start` ends (one past its closing bracket);
// npos when the text ends first or the value does not start there.
size_t json_value_end(std::string_view t, size_t start) {
  if (start >= t.size() || (t[start] != '{' && t[start] != '[')) return std::string_view::npos;
  int depth = 0;
  bool in_string = false;
  for (size_t i = start; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 256) return std::string_view::npos;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// {"name": ..., "arguments" | "parameters": {...}} -> a call; nullopt when it is not one.
std::optional<ToolCall> call_of(std::string_view text) {
  json v;
  try {
    v = json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
  if (!v.is_object() || !v.contains("name") || !v["name"].is_string()) return std::nullopt;
  json arguments = json::object();
  for (const char* key : {"arguments", "parameters"})
    if (v.contains(key)) arguments = v[key];
  if (arguments.is_string()) {  // some models write the arguments as a JSON string
    try {
      arguments = json::parse(arguments.get<std::string>());
    } catch (const json::exception&) {
      return std::nullopt;
    }
  }
  if (!arguments.is_object()) return std::nullopt;
  return ToolCall{v["name"].get<std::string>(), arguments.dump(-1, ' ', false, json::error_handler_t::replace)};
}

// How much of the text's end could be the start of `marker` (held back while streaming).
size_t partial_marker(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
    if (marker.substr(0, n) == text.substr(text.size() - n)) return n;
  return 0;
}

// Content before a marker: all of it when final, else without a tail that may begin the marker.
ToolParse content_only(std::string_view text, std::string_view marker, bool final) {
  ToolParse p;
  const size_t hold = final ? 0 : partial_marker(text, marker);
  p.content = std::string(text.substr(0, text.size() - hold));
  p.pending = hold > 0;
  return p;
}

ToolParse parse_hermes(std::string_view text, bool final) {
  size_t at = text.find(kHermesOpen);
  if (at == std::string_view::npos) return content_only(text, kHermesOpen, final);
  ToolParse p;
  p.content = std::string(text.substr(0, at));
  while (at != std::string_view::npos) {
    const size_t body = at + kHermesOpen.size();
    const size_t close = text.find(kHermesClose, body);
    const std::optional<ToolCall> call =
        close == std::string_view::npos ? std::nullopt : call_of(text.substr(body, close - body));
    if (!call) {  // unfinished: pending while streaming; at the end (or malformed) it is content
      if (final || close != std::string_view::npos) p.content += std::string(text.substr(at));
      else p.pending = true;
      return p;
    }
    p.calls.push_back(*call);
    at = text.find(kHermesOpen, close + kHermesClose.size());
  }
  return p;
}

ToolParse parse_llama(std::string_view text, bool final) {
  // Calls only where the reply starts with them (as the grammar of `auto` has it).
  size_t i = 0;
  const std::string_view rest = text;
  if (rest.substr(0, kPythonTag.size()) == kPythonTag) {
    i = skip_space(text, i + kPythonTag.size());
  } else if (rest.empty() || (!final && kPythonTag.substr(0, rest.size()) == rest)) {
    ToolParse p;  // undecided: a call may be starting
    p.pending = !final;
    if (final) p.content = std::string(text);
    return p;
  } else if (rest[0] != '{') {
    return ToolParse{std::string(text), {}, false};
  }
  ToolParse p;
  for (;;) {
    const size_t end = json_value_end(text, i);
    const std::optional<ToolCall> call =
        end == std::string_view::npos ? std::nullopt : call_of(text.substr(i, end - i));
    if (!call) {
      if (!final && end == std::string_view::npos) {
        p.pending = true;
        return p;
      }
      // Not a call, or one cut short: content from there on (the whole reply when it is the first).
      p.content = std::string(p.calls.empty() ? text : text.substr(i));
      return p;
    }
    p.calls.push_back(*call);
    i = skip_space(text, end);
    if (i < text.size() && text[i] == ';') i = skip_space(text, i + 1);
    if (i >= text.size()) return p;
  }
}

ToolParse parse_mistral(std::string_view text, bool final) {
  const size_t at = text.find(kMistralOpen);
  if (at == std::string_view::npos) return content_only(text, kMistralOpen, final);
  ToolParse p;
  p.content = std::string(text.substr(0, at));
  size_t i = skip_space(text, at + kMistralOpen.size());
  // The list ends early (cut short) or holds what is not a call: the calls before stay (a stream
  // has sent them), the rest is content; while streaming, a list that may go on is pending.
  const auto unfinished = [&](bool may_go_on) {
    if (!final && may_go_on) p.pending = true;
    else p.content += std::string(text.substr(p.calls.empty() ? at : i));
    return p;
  };
  if (i >= text.size()) return unfinished(true);
  if (text[i] != '[') return unfinished(false);
  i = skip_space(text, i + 1);
  for (;;) {
    const size_t end = json_value_end(text, i);
    const std::optional<ToolCall> call =
        end == std::string_view::npos ? std::nullopt : call_of(text.substr(i, end - i));
    if (!call) return unfinished(end == std::string_view::npos);
    p.calls.push_back(*call);
    i = skip_space(text, end);
    if (i < text.size() && text[i] == ',') {
      i = skip_space(text, i + 1);
      continue;
    }
    if (i < text.size() && text[i] == ']') return p;
    return unfinished(i >= text.size());
  }
}

}  // namespace

std::optional<ToolFormat> tool_format_named(std::string_view name) { return value_named(kToolFormatNames, name); }

const char* tool_format_name(ToolFormat format) { return name_of(kToolFormatNames, format); }

std::optional<ToolFormat> tool_format_of_template(std::string_view source) {
  if (source.find(kHermesOpen) != std::string_view::npos) return ToolFormat::hermes;
  if (source.find(kMistralOpen) != std::string_view::npos) return ToolFormat::mistral;
  if (source.find(kPythonTag) != std::string_view::npos ||
      (source.find("\"parameters\"") != std::string_view::npos && source.find("ipython") != std::string_view::npos))
    return ToolFormat::llama3_json;
  return std::nullopt;
}

ToolParse parse_tool_calls(ToolFormat format, std::string_view text, bool final) {
  switch (format) {
    case ToolFormat::hermes: return parse_hermes(text, final);
    case ToolFormat::llama3_json: return parse_llama(text, final);
    case ToolFormat::mistral: return parse_mistral(text, final);
  }
  return {};
}

std::string tool_calls_marker(ToolFormat format) {
  switch (format) {
    case ToolFormat::hermes: return std::string(kHermesOpen);
    case ToolFormat::llama3_json: return std::string(kPythonTag);
    case ToolFormat::mistral: return std::string(kMistralOpen);
  }
  return "";
}

int32_t tool_calls_rule(grammar::JsonGrammar& j, ToolFormat format, const std::vector<ToolFunction>& functions,
                        int64_t max_calls) {
  GrammarBuilder& b = j.builder();
  const auto lit = [&](std::string_view t) { return b.literal(t); };
  const auto cat = [](std::initializer_list<Sequence> parts) {
    Sequence out;
    for (const Sequence& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  const Sequence ws = {j.ws()};
  // One call: {"name": "<function>", "arguments": <its parameters>}, a branch per function.
  const std::string arguments_key = format == ToolFormat::llama3_json ? "\"parameters\"" : "\"arguments\"";
  const int32_t call = b.add_rule("call");
  for (size_t i = 0; i < functions.size(); ++i) {
    const int32_t args = j.schema(functions[i].parameters, concat("#/tools/", i, "/function/parameters"));
    b.add_alternative(call, cat({lit("{"),
                                 ws,
                                 lit("\"name\""),
                                 ws,
                                 lit(":"),
                                 ws,
                                 j.value_literal(functions[i].name),
                                 ws,
                                 lit(","),
                                 ws,
                                 lit(arguments_key),
                                 ws,
                                 lit(":"),
                                 ws,
                                 {GrammarBuilder::ref(args)},
                                 ws,
                                 lit("}")}));
  }
  Sequence one, separator;
  switch (format) {
    case ToolFormat::hermes:
      one = cat({lit(kHermesOpen), ws, {GrammarBuilder::ref(call)}, ws, lit(kHermesClose)});
      separator = ws;
      break;
    case ToolFormat::llama3_json:
      one = {GrammarBuilder::ref(call)};
      separator = cat({ws, lit(";"), ws});
      break;
    case ToolFormat::mistral:
      one = {GrammarBuilder::ref(call)};
      separator = cat({ws, lit(","), ws});
      break;
  }
  const int32_t first = b.add_rule("tool-call", {one});
  const int32_t next = b.add_rule("tool-call-next", {cat({separator, one})});
  const int32_t more = b.repeat(GrammarBuilder::ref(next), 0, max_calls - 1);
  const Sequence calls = {GrammarBuilder::ref(first), GrammarBuilder::ref(more)};
  switch (format) {
    case ToolFormat::hermes: return b.add_rule("tool-calls", {calls});
    case ToolFormat::llama3_json:  // optionally after <|python_tag|>
      return b.add_rule("tool-calls", {calls, cat({lit(kPythonTag), ws, calls})});
    case ToolFormat::mistral:
      return b.add_rule("tool-calls", {cat({lit(kMistralOpen), ws, lit("["), ws, calls, ws, lit("]")})});
  }
  return -1;
}

int32_t tool_choice_auto_rule(grammar::JsonGrammar& j, ToolFormat format, int32_t calls) {
  GrammarBuilder& b = j.builder();
  const std::string marker = tool_calls_marker(format);
  const std::vector<int32_t> text = b.text_without(marker);
  if (format != ToolFormat::llama3_json)
    return b.add_rule("reply",
                      {{GrammarBuilder::ref(text[0])}, {GrammarBuilder::ref(text[0]), GrammarBuilder::ref(calls)}});
  // Llama: a reply that starts with "{" or the tag is calls; any other reply is text.
  ByteSet other;
  for (int c = 0; c < 256; ++c)
    if (c != '{' && c != marker[0]) other.add(static_cast<uint8_t>(c));
  return b.add_rule("reply", {{GrammarBuilder::ref(calls)},
                              {},
                              {b.bytes(other), GrammarBuilder::ref(text[0])},
                              {b.bytes(ByteSet::of(static_cast<uint8_t>(marker[0]))), GrammarBuilder::ref(text[1])}});
}

}  // namespace difftx::serve
