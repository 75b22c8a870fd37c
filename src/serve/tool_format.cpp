#include "serve/tool_format.h"

#include <algorithm>
#include <span>

#include "core/enum_names.h"
#include "data/tokenizer.h"
#include "serve/json_call.h"
#include "serve/openai_response.h"
#include "serve/python_literal.h"
#include "serve/xml_calls.h"

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
// What Mistral's tokenizers from v11 on write between a call's name and its arguments.
constexpr std::string_view kMistralArgs = "[ARGS]", kMistralCallId = "[CALL_ID]";
constexpr std::string_view kPythonStart = "<|python_start|>", kPythonEnd = "<|python_end|>";
constexpr std::string_view kPhi4Open = "functools";
constexpr std::string_view kGraniteOpen = "<|tool_call|>";
constexpr std::string_view kDeepSeekOpen = "<｜tool▁calls▁begin｜>", kDeepSeekClose = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekCallOpen = "<｜tool▁call▁begin｜>", kDeepSeekSep = "<｜tool▁sep｜>",
                           kDeepSeekCallClose = "<｜tool▁call▁end｜>";
constexpr std::string_view kKimiOpen = "<|tool_calls_section_begin|>", kKimiClose = "<|tool_calls_section_end|>";
// The section's markers in the singular, which Kimi K2 models sometimes write (vLLM reads both).
constexpr std::string_view kKimiOpenSingular = "<|tool_call_section_begin|>",
                           kKimiCloseSingular = "<|tool_call_section_end|>";
constexpr std::string_view kKimiCallOpen = "<|tool_call_begin|>", kKimiArguments = "<|tool_call_argument_begin|>",
                           kKimiCallClose = "<|tool_call_end|>";
constexpr std::string_view kActionStart = "<|action_start|>", kInternLmOpen = "<|action_start|><|plugin|>",
                           kInternLmClose = "<|action_end|>";
constexpr std::string_view kToolCallsOpen = "<tool_calls>", kToolCallsClose = "</tool_calls>";
// Hunyuan's template has a reply in words begin with "Assistant:", which vLLM leaves out.
constexpr std::string_view kHunyuanReply = "助手：";
constexpr std::string_view kFunctionCall = "<function_call>";
constexpr std::string_view kNemotronOpen = "<TOOLCALL>", kNemotronClose = "</TOOLCALL>";
constexpr std::string_view kSeedOpen = "<seed:tool_call>", kSeedClose = "</seed:tool_call>";
// Where xLAM's list may stand besides the reply's start, as vLLM reads it: in a fence (```json, or
// ``` and at most a space or newline before the list), after [TOOL_CALLS], in <tool_call>. A
// marker ending with "[" has the list's bracket as its last byte.
constexpr std::string_view kXlamMarkers[] = {"```json", "```[", "``` [", "```\n[", kMistralOpen, kHermesOpen};

constexpr EnumName<ToolFormat> kToolFormatNames[] = {
    {ToolFormat::hermes, "hermes"},           {ToolFormat::llama3_json, "llama3_json"},
    {ToolFormat::mistral, "mistral"},         {ToolFormat::mistral_v11, "mistral_v11"},
    {ToolFormat::pythonic, "pythonic"},
    {ToolFormat::phi4_mini, "phi4_mini"},     {ToolFormat::granite, "granite"},
    {ToolFormat::deepseek_v3, "deepseek_v3"}, {ToolFormat::deepseek_v31, "deepseek_v31"},
    {ToolFormat::qwen3_coder, "qwen3_coder"}, {ToolFormat::glm45, "glm45"},
    {ToolFormat::kimi_k2, "kimi_k2"},         {ToolFormat::internlm, "internlm"},
    {ToolFormat::hunyuan_a13b, "hunyuan_a13b"}, {ToolFormat::minimax, "minimax"},
    {ToolFormat::xlam, "xlam"},               {ToolFormat::granite_20b_fc, "granite_20b_fc"},
    {ToolFormat::nemotron_json, "nemotron_json"}, {ToolFormat::seed_oss, "seed_oss"}};
// vLLM's names for the same formats.
constexpr EnumName<ToolFormat> kToolFormatAliases[] = {{ToolFormat::llama3_json, "llama4_json"},
                                                       {ToolFormat::pythonic, "llama4_pythonic"},
                                                       {ToolFormat::phi4_mini, "phi4_mini_json"},
                                                       {ToolFormat::qwen3_coder, "qwen3_xml"},
                                                       {ToolFormat::glm45, "glm47"},
                                                       {ToolFormat::granite_20b_fc, "granite-20b-fc"}};

// OpenAI's function names: 1 to 64 of these.
constexpr size_t kMaxFunctionName = 64;
bool function_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// How much of the text's end could be the start of `marker` (held back while streaming).
size_t partial_marker(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
    if (marker.substr(0, n) == text.substr(text.size() - n)) return n;
  return 0;
}

// Content before a marker: all of it when final, else without a tail that may begin one of them.
ToolParse content_only(std::string_view text, std::span<const std::string_view> markers, bool final) {
  ToolParse p;
  size_t hold = 0;
  if (!final)
    for (std::string_view marker : markers) hold = std::max(hold, partial_marker(text, marker));
  p.content = std::string(text.substr(0, text.size() - hold));
  p.pending = hold > 0;
  return p;
}
ToolParse content_only(std::string_view text, std::string_view marker, bool final) {
  return content_only(text, {&marker, 1}, final);
}

// The text after a turn's calls, from i: content past white space and an optional closing
// `marker`; while streaming, a tail that may begin the marker waits.
ToolParse& with_rest(ToolParse& p, std::string_view text, size_t i, std::string_view marker, bool final) {
  i = skip_json_space(text, i);
  if (!marker.empty()) {
    const Scan s = expect(text, i, marker);
    if (s == Scan::more && i < text.size() && !final) {
      p.pending = true;
      return p;
    }
    if (s == Scan::done) i = skip_json_space(text, i);
  }
  p.content += std::string(text.substr(i));
  return p;
}

// A call the text ends inside, `call` as far as it is known: while streaming, pending, and open
// once named; at the end, a named call stays, cut short, and an unnamed one's text (`rest`) is
// content.
ToolParse& cut_short(ToolParse& p, ToolCall call, std::string_view rest, bool final) {
  if (!call.name.empty()) {
    p.calls.push_back(std::move(call));
    p.open = !final;
  } else if (final) {
    p.content += std::string(rest);
  }
  p.pending = !final;
  return p;
}

// The ids the model wrote for its calls, less one an earlier call of the reply has (the server
// makes one for it).
ToolParse with_distinct_ids(ToolParse p) {
  for (size_t k = 0; k < p.calls.size(); ++k)
    for (size_t e = 0; e < k; ++e)
      if (p.calls[e].id == p.calls[k].id) p.calls[k].id.clear();
  return p;
}

// Blocks of one call each, open CALL close (the close marker may be empty), read by
// read_call(text, i, call) (hermes, internlm, granite_20b_fc: JSON, qwen3_coder and glm45: XML);
// the text between and after the blocks is not content.
ToolParse parse_tool_call_blocks(std::string_view text, std::string_view open, std::string_view close, bool final,
                                 const auto& read_call) {
  size_t at = text.find(open);
  if (at == std::string_view::npos) return content_only(text, open, final);
  ToolParse p;
  p.content = std::string(text.substr(0, at));
  while (at != std::string_view::npos) {
    size_t i = skip_json_space(text, at + open.size());
    ToolCall call;
    Scan s = read_call(text, i, call);
    if (s == Scan::done) s = expect(text, i = skip_json_space(text, i), close);
    if (s == Scan::more) return cut_short(p, std::move(call), text.substr(at), final);
    if (s == Scan::bad) {  // malformed: content
      p.content += std::string(text.substr(at));
      return p;
    }
    p.calls.push_back(std::move(call));
    at = text.find(open, i);
  }
  return p;
}

// A reply that is empty or a prefix of the tag that opens calls: undecided while streaming.
ToolParse undecided(std::string_view text, bool final) {
  ToolParse p;
  p.pending = !final;
  if (final) p.content = std::string(text);
  return p;
}

ToolParse parse_llama(std::string_view text, bool final) {
  // Calls only where the reply starts with them (as the grammar of `auto` has it).
  size_t i = 0;
  const std::string_view rest = text;
  if (rest.substr(0, kPythonTag.size()) == kPythonTag) {
    i = skip_json_space(text, i + kPythonTag.size());
  } else if (rest.empty() || (!final && kPythonTag.substr(0, rest.size()) == rest)) {
    return undecided(text, final);
  } else if (rest[0] != '{') {
    return ToolParse{std::string(text), {}, false};
  }
  ToolParse p;
  for (;;) {
    ToolCall call;
    const size_t start = i;
    const Scan s = read_json_call(text, i, call);
    if (s == Scan::more) return cut_short(p, std::move(call), text.substr(p.calls.empty() ? 0 : start), final);
    if (s == Scan::bad) {  // not a call: content from there on (the whole reply when it is the first)
      p.content = std::string(text.substr(p.calls.empty() ? 0 : start));
      return p;
    }
    p.calls.push_back(std::move(call));
    i = skip_json_space(text, i);
    if (i < text.size() && text[i] == ';') i = skip_json_space(text, i + 1);
    if (i >= text.size()) return p;
  }
}

// The list of calls at text[i] (after white space) of a turn that `at` opens, p.content holding
// the text before: [call, ...], or where `bare`, also call, ... without the brackets (then ended by
// what follows the last call). The list ends early (cut short) or holds what is not a call: the
// calls before stay (a stream has sent them), the rest is content; while streaming, a list that
// may go on is pending. After it: white space, the optional `close` marker, content.
ToolParse read_call_list(ToolParse p, std::string_view text, size_t at, size_t i, std::string_view close, bool final,
                         bool bare = false) {
  i = skip_json_space(text, i);
  const auto unfinished = [&](bool may_go_on) {
    if (!final && may_go_on) p.pending = true;
    else p.content += std::string(text.substr(p.calls.empty() ? at : i));
    return p;
  };
  if (i >= text.size()) return unfinished(true);
  const bool bracket = text[i] == '[';
  if (!bracket && !(bare && text[i] == '{')) return unfinished(false);
  if (bracket) i = skip_json_space(text, i + 1);
  for (;;) {
    ToolCall call;
    const size_t start = i;
    const Scan s = read_json_call(text, i, call);
    if (s == Scan::more) return cut_short(p, std::move(call), text.substr(p.calls.empty() ? at : start), final);
    if (s == Scan::bad) {
      i = start;
      return unfinished(false);
    }
    p.calls.push_back(std::move(call));
    i = skip_json_space(text, i);
    if (i < text.size() && text[i] == ',') {
      i = skip_json_space(text, i + 1);
      continue;
    }
    if (!bracket) return with_rest(p, text, i, close, final);
    if (i < text.size() && text[i] == ']') return with_rest(p, text, i + 1, close, final);
    return unfinished(i >= text.size());
  }
}

// marker [call, ...] close (mistral, phi4_mini, granite: no close; hunyuan_a13b, nemotron_json).
ToolParse parse_json_list(std::string_view text, std::string_view marker, std::string_view close, bool final,
                          bool bare = false) {
  const size_t at = text.find(marker);
  if (at == std::string_view::npos) return content_only(text, marker, final);
  ToolParse p;
  p.content = std::string(text.substr(0, at));
  return read_call_list(std::move(p), text, at, at + marker.size(), close, final, bare);
}

// Hunyuan: its list, after kHunyuanReply where the reply starts with it (left out of the content).
ToolParse parse_hunyuan(std::string_view text, bool final) {
  size_t i = 0;
  const Scan reply = expect(text, i, kHunyuanReply);
  if (reply == Scan::more) return undecided(text, final);
  return parse_json_list(text.substr(reply == Scan::done ? i : 0), kToolCallsOpen, kToolCallsClose, final);
}

// xLAM: the list as the reply (after white space), else after the first of kXlamMarkers.
ToolParse parse_xlam(std::string_view text, bool final) {
  const size_t first = skip_json_space(text, 0);
  if (first == text.size()) return undecided(text, final);
  size_t i = first;
  if (text[first] == '[' && expect(text, i, kMistralOpen) == Scan::bad) {
    ToolParse p;
    p.content = std::string(text.substr(0, first));
    return read_call_list(std::move(p), text, first, first, "", final);
  }
  size_t at = std::string_view::npos;
  std::string_view marker;
  for (std::string_view m : kXlamMarkers)
    if (const size_t found = text.find(m); found < at) at = found, marker = m;
  if (marker.empty()) return content_only(text, kXlamMarkers, final);
  ToolParse p;
  p.content = std::string(text.substr(0, at));
  const std::string_view close = marker.starts_with('`') ? "```" : marker == kHermesOpen ? kHermesClose : "";
  return read_call_list(std::move(p), text, at, at + marker.size() - (marker.ends_with('[') ? 1 : 0), close, final);
}

// name(key=value, ...) at text[i] -> a call, the values Python literals. A call the text ends
// inside is named once its "(" is read, and has the arguments read so far.
Scan read_pythonic_call(std::string_view text, size_t& i, ToolCall& call) {
  std::string name;
  if (const Scan s = read_python_identifier(text, i, name); s != Scan::done) return s;
  i = skip_python_space(text, i);
  if (i >= text.size()) return Scan::more;
  if (text[i] != '(') return Scan::bad;
  call.name = std::move(name);
  call.arguments = '{';  // the object written as its members come: a prefix of the finished one
  std::vector<std::string> keys;
  for (i = skip_python_space(text, i + 1);; i = skip_python_space(text, i)) {
    if (i >= text.size()) return Scan::more;
    if (text[i] == ')') break;
    std::string key;
    nlohmann::ordered_json value;
    if (const Scan s = read_python_identifier(text, i, key); s != Scan::done) return s;
    if (!grammar::python_keyword_name(key) || std::find(keys.begin(), keys.end(), key) != keys.end())
      return Scan::bad;  // as Python's syntax
    i = skip_python_space(text, i);
    if (i >= text.size()) return Scan::more;
    if (text[i] != '=') return Scan::bad;  // a positional argument: no name to pass it by
    i = skip_python_space(text, i + 1);
    if (const Scan s = read_python_literal(text, i, value); s != Scan::done) return s;
    add_argument(call.arguments, key, dump_ordered_json(value));
    keys.push_back(std::move(key));
    i = skip_python_space(text, i);
    if (i >= text.size()) return Scan::more;
    if (text[i] == ',') ++i;
    else if (text[i] != ')') return Scan::bad;
  }
  ++i;
  call.arguments += "}";
  return Scan::done;
}

ToolParse parse_pythonic(std::string_view text, bool final) {
  // Calls only where the reply starts with them (as vLLM reads them and the grammar of `auto` has it).
  size_t i = 0;
  const Scan tag = expect(text, i, kPythonStart);
  if (tag == Scan::more) return undecided(text, final);
  if (tag == Scan::done) i = skip_python_space(text, i);
  if (i >= text.size()) return undecided(text, final);
  if (text[i] != '[') return ToolParse{std::string(text), {}, false};
  ToolParse p;
  const auto unfinished = [&](bool may_go_on, size_t from) {
    if (!final && may_go_on) p.pending = true;
    else p.content = std::string(text.substr(p.calls.empty() ? 0 : from));
    return p;
  };
  for (i = skip_python_space(text, i + 1);;) {
    ToolCall call;
    const size_t start = i;
    const Scan s = read_pythonic_call(text, i, call);
    if (s == Scan::more) return cut_short(p, std::move(call), text.substr(p.calls.empty() ? 0 : start), final);
    if (s == Scan::bad) return unfinished(false, start);
    p.calls.push_back(std::move(call));
    i = skip_python_space(text, i);
    const bool comma = i < text.size() && text[i] == ',';
    if (comma) i = skip_python_space(text, i + 1);
    if (i >= text.size()) return unfinished(true, i);
    if (text[i] == ']') return with_rest(p, text, i + 1, kPythonEnd, final);
    if (!comma) return unfinished(false, i);
  }
}

// The arguments object at text[i] (JSON), i moving past it; more: `call` holds those so far.
Scan read_arguments_object(std::string_view text, size_t& i, ToolCall& call) {
  if (i >= text.size()) return Scan::more;
  if (text[i] != '{') return Scan::bad;
  const size_t start = i;
  if (skip_json_value(text, i) == Scan::more) {
    call.arguments = json_without_space(text.substr(start));
    return Scan::more;
  }
  call.arguments = arguments_text(text.substr(start, i - start));
  return call.arguments.starts_with('{') ? Scan::done : Scan::bad;  // not an object (or not JSON)
}

// A DeepSeek call at text[i]: V3's <｜tool▁call▁begin｜>TYPE<｜tool▁sep｜>NAME\n```json\n{...}\n```
// <｜tool▁call▁end｜> (the fence optional), or V3.1's <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}
// <｜tool▁call▁end｜>.
Scan read_deepseek_call(std::string_view text, size_t& i, ToolCall& call, ToolFormat format) {
  if (const Scan s = expect(text, i, kDeepSeekCallOpen); s != Scan::done) return s;
  const size_t sep = text.find(kDeepSeekSep, i);
  if (text.find('\n', i) < sep) return Scan::bad;  // TYPE and V3.1's NAME are one line
  if (sep == std::string_view::npos) return Scan::more;
  const size_t after = sep + kDeepSeekSep.size();
  if (format == ToolFormat::deepseek_v31) {
    call.name = std::string(text.substr(i, sep - i));
    i = after;
  } else {
    const size_t eol = text.find('\n', after);
    if (eol == std::string_view::npos) return Scan::more;
    call.name = std::string(text.substr(after, eol - after));
    i = eol + 1;
  }
  if (call.name.empty()) return Scan::bad;
  i = skip_json_space(text, i);
  const bool fenced = format == ToolFormat::deepseek_v3 && i < text.size() && text[i] == '`';
  if (fenced) {
    if (const Scan s = expect(text, i, "```json"); s != Scan::done) return s;
    i = skip_json_space(text, i);
  }
  if (const Scan s = read_arguments_object(text, i, call); s != Scan::done) return s;
  i = skip_json_space(text, i);
  if (fenced) {
    if (const Scan s = expect(text, i, "```"); s != Scan::done) return s;
    i = skip_json_space(text, i);
  }
  return expect(text, i, kDeepSeekCallClose);
}

// A Kimi K2 call at text[i]: <|tool_call_begin|>ID<|tool_call_argument_begin|>{...}<|tool_call_end|>,
// ID functions.NAME:INDEX (the name after the last '.', as vLLM reads it) and the call's id.
Scan read_kimi_call(std::string_view text, size_t& i, ToolCall& call) {
  if (const Scan s = expect(text, i, kKimiCallOpen); s != Scan::done) return s;
  i = skip_json_space(text, i);
  const size_t end = text.find('<', i);
  if (end == std::string_view::npos) return Scan::more;
  std::string_view id = text.substr(i, end - i);
  id = id.substr(0, id.find_last_not_of(" \t\r\n") + 1);  // as vLLM, white space around it
  i = end;
  if (const Scan s = expect(text, i, kKimiArguments); s != Scan::done) return s;
  const size_t colon = id.find(':');
  if (colon == std::string_view::npos || colon + 1 == id.size() ||
      id.find_first_not_of("0123456789", colon + 1) != std::string_view::npos)
    return Scan::bad;
  const std::string_view path = id.substr(0, colon), name = path.substr(path.rfind('.') + 1);
  if (!valid_function_name(name)) return Scan::bad;
  call.name = std::string(name);
  call.id = std::string(id);
  i = skip_json_space(text, i);
  if (const Scan s = read_arguments_object(text, i, call); s != Scan::done) return s;
  i = skip_json_space(text, i);
  return expect(text, i, kKimiCallClose);
}

// open, calls each read by read_call(text, i, call) with white space between, one of the closes
// (DeepSeek's and Kimi's marked sections; minimax: JSON calls). Text after the close is content.
ToolParse parse_call_section(std::string_view text, std::string_view open,
                             std::initializer_list<std::string_view> closes, bool final, const auto& read_call) {
  const size_t at = text.find(open);
  if (at == std::string_view::npos) return content_only(text, open, final);
  ToolParse p;
  p.content = std::string(text.substr(0, at));
  for (size_t i = skip_json_space(text, at + open.size());; i = skip_json_space(text, i)) {
    Scan closed = Scan::bad;
    for (std::string_view close : closes) {
      size_t end = i;
      const Scan s = expect(text, end, close);
      if (s == Scan::done) return with_rest(p, text, end, "", final);
      if (s == Scan::more) closed = Scan::more;
    }
    ToolCall call;
    const size_t start = i;
    const Scan s = read_call(text, i, call);
    if (s == Scan::more) return cut_short(p, std::move(call), text.substr(p.calls.empty() ? at : start), final);
    if (s == Scan::bad) {  // as in read_call_list; or the calls' closing marker begun
      if (!final && closed == Scan::more) p.pending = true;
      else p.content += std::string(text.substr(p.calls.empty() ? at : start));
      return p;
    }
    p.calls.push_back(std::move(call));
  }
}

ToolParse parse_kimi(std::string_view text, bool final) {
  const size_t plural = text.find(kKimiOpen), singular = text.find(kKimiOpenSingular);
  if (plural == std::string_view::npos && singular == std::string_view::npos) {
    const std::string_view opens[] = {kKimiOpen, kKimiOpenSingular};
    return content_only(text, opens, final);
  }
  // The first section's opening form; either form closes it, as vLLM reads them.
  return with_distinct_ids(parse_call_section(text, singular < plural ? kKimiOpenSingular : kKimiOpen,
                                              {kKimiClose, kKimiCloseSingular}, final, read_kimi_call));
}

// A Mistral call id: 9 letters and digits (its templates refuse others).
bool mistral_call_id(std::string_view id) {
  return id.size() == 9 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
         });
}

// A call of Mistral's tokenizers from v11 on at text[i], after its [TOOL_CALLS]: NAME, optionally
// [CALL_ID]ID, [ARGS], the arguments object; or NAME and the object at once (vLLM reads that too:
// Mistral's own decoding drops [ARGS]). Named once its arguments have begun, with the model's id
// where it wrote one Mistral's templates take.
Scan read_mistral_call(std::string_view text, size_t& i, ToolCall& call) {
  size_t j = i;
  while (j < text.size() && function_name_char(text[j])) ++j;
  const std::string_view name = text.substr(i, j - i);
  if (name.size() > kMaxFunctionName) return Scan::bad;
  j = skip_json_space(text, j);
  if (j >= text.size()) return Scan::more;
  if (name.empty()) return Scan::bad;
  std::string_view id;
  const Scan id_marker = expect(text, j, kMistralCallId);
  if (id_marker == Scan::more) return Scan::more;
  if (id_marker == Scan::done) {
    const size_t end = text.find('[', j);
    if (end == std::string_view::npos) return Scan::more;
    id = text.substr(j, end - j);
    j = end;
  }
  if (text[j] == '[') {
    if (const Scan s = expect(text, j, kMistralArgs); s != Scan::done) return s;
    j = skip_json_space(text, j);
    if (j >= text.size()) return Scan::more;
  }
  if (text[j] != '{') return Scan::bad;
  call.name = std::string(name);
  if (mistral_call_id(id)) call.id = std::string(id);
  i = j;
  return read_arguments_object(text, i, call);
}

// Mistral's calls after [TOOL_CALLS]: the list of its tokenizers before v11 ([{"name": ...,
// "arguments": {...}}, ...], read_call_list), or from v11 on one call after each [TOOL_CALLS]
// (read_mistral_call), back to back or with white space between. Text after the calls is content.
ToolParse parse_mistral(std::string_view text, bool final) {
  const size_t at = text.find(kMistralOpen);
  if (at == std::string_view::npos) return content_only(text, kMistralOpen, final);
  ToolParse p;
  p.content = std::string(text.substr(0, at));
  size_t i = skip_json_space(text, at + kMistralOpen.size());
  if (i < text.size() && text[i] == '[') return read_call_list(std::move(p), text, at, i, "", final);
  for (size_t open = at;;) {
    ToolCall call;
    const Scan s = read_mistral_call(text, i, call);
    if (s == Scan::more) return cut_short(p, std::move(call), text.substr(open), final);
    if (s == Scan::bad) {  // malformed: content from its [TOOL_CALLS] on, the calls before it stay
      p.content += std::string(text.substr(open));
      return p;
    }
    p.calls.push_back(std::move(call));
    open = skip_json_space(text, i);
    i = open;
    const Scan next = expect(text, i, kMistralOpen);
    if (next == Scan::more && !final) {
      p.pending = true;
      return p;
    }
    if (next != Scan::done) return with_rest(p, text, open, "", final);
    i = skip_json_space(text, i);
  }
}

}  // namespace

bool valid_function_name(std::string_view name) {
  return !name.empty() && name.size() <= kMaxFunctionName && std::all_of(name.begin(), name.end(), function_name_char);
}

std::optional<ToolFormat> tool_format_named(std::string_view name) {
  if (const auto format = value_named(kToolFormatNames, name)) return format;
  return value_named(kToolFormatAliases, name);
}

const char* tool_format_name(ToolFormat format) { return name_of(kToolFormatNames, format); }

std::string tool_format_names(std::string_view separator) {
  std::string names;
  for (const EnumName<ToolFormat>& n : kToolFormatNames) {
    if (!names.empty()) names += separator;
    names += n.name;
  }
  return names;
}

std::optional<ToolFormat> tool_format_of_template(std::string_view source) {
  const auto has = [&](std::string_view text) { return source.find(text) != std::string_view::npos; };
  // The newer families first: the pythonic templates mention "ipython", as Llama's JSON ones do.
  if (has(kKimiOpen)) return ToolFormat::kimi_k2;
  if (has(kSeedOpen)) return ToolFormat::seed_oss;
  if (has(kDeepSeekOpen)) return has("```json") ? ToolFormat::deepseek_v3 : ToolFormat::deepseek_v31;
  if (has(kGraniteOpen)) return ToolFormat::granite;
  if (has("functools[")) return ToolFormat::phi4_mini;
  if (has("[func_name1(")) return ToolFormat::pythonic;  // their instruction: [func_name1(params_name1=...), ...]
  // <function=NAME> in <tool_call> blocks (without them: Llama 3.1's user-defined calls); GLM's
  // <arg_key> in them.
  if (has(kHermesOpen))
    return has("<function=") ? ToolFormat::qwen3_coder : has("<arg_key>") ? ToolFormat::glm45 : ToolFormat::hermes;
  if (has(kMistralOpen)) return has(kMistralArgs) ? ToolFormat::mistral_v11 : ToolFormat::mistral;
  if (has(kPythonTag) || (has("\"parameters\"") && has("ipython"))) return ToolFormat::llama3_json;
  // Families whose templates show none of the markers above, after them so that no template
  // recognised before changes family (xLAM's Llama template says "ipython", the Granite-20B one
  // "parameters").
  if (has(kInternLmOpen)) return ToolFormat::internlm;
  if (has(kToolCallsOpen)) return has("<tool_calls>[") ? ToolFormat::hunyuan_a13b : ToolFormat::minimax;
  if (has("make calls in a single JSON array")) return ToolFormat::xlam;  // the instruction of its templates
  if (has(kFunctionCall)) return ToolFormat::granite_20b_fc;
  if (has(kNemotronOpen)) return ToolFormat::nemotron_json;
  return std::nullopt;
}

ToolFormat tool_format_for_tokenizer(ToolFormat format, const data::Tokenizer& tokenizer) {
  const bool v11 = tokenizer.added().by_content(kMistralArgs) != nullptr;
  return format == ToolFormat::mistral && v11 ? ToolFormat::mistral_v11 : format;
}

ToolParse parse_tool_calls(ToolFormat format, std::string_view text, bool final,
                           const std::vector<ToolFunction>& functions) {
  switch (format) {
    case ToolFormat::hermes: return parse_tool_call_blocks(text, kHermesOpen, kHermesClose, final, read_json_call);
    case ToolFormat::qwen3_coder:
    case ToolFormat::seed_oss:
      return parse_tool_call_blocks(text, format == ToolFormat::seed_oss ? kSeedOpen : kHermesOpen,
                                    format == ToolFormat::seed_oss ? kSeedClose : kHermesClose, final,
                                    [&](std::string_view t, size_t& i, ToolCall& call) {
                                      return read_xml_call(t, i, call, functions);
                                    });
    case ToolFormat::glm45:
      return parse_tool_call_blocks(text, kHermesOpen, kHermesClose, final,
                                    [&](std::string_view t, size_t& i, ToolCall& call) {
                                      return read_glm_call(t, i, call, functions);
                                    });
    case ToolFormat::internlm:
      return parse_tool_call_blocks(text, kInternLmOpen, kInternLmClose, final, read_json_call);
    case ToolFormat::granite_20b_fc: return parse_tool_call_blocks(text, kFunctionCall, "", final, read_json_call);
    case ToolFormat::llama3_json: return parse_llama(text, final);
    case ToolFormat::mistral:
    case ToolFormat::mistral_v11: return with_distinct_ids(parse_mistral(text, final));
    case ToolFormat::phi4_mini:
    case ToolFormat::granite: return parse_json_list(text, tool_calls_marker(format), "", final);
    case ToolFormat::hunyuan_a13b: return parse_hunyuan(text, final);
    case ToolFormat::nemotron_json:  // also without the brackets, as vLLM reads it
      return parse_json_list(text, kNemotronOpen, kNemotronClose, final, true);
    case ToolFormat::xlam: return parse_xlam(text, final);
    case ToolFormat::pythonic: return parse_pythonic(text, final);
    case ToolFormat::deepseek_v3:
    case ToolFormat::deepseek_v31:
      return parse_call_section(text, kDeepSeekOpen, {kDeepSeekClose}, final,
                                [&](std::string_view t, size_t& i, ToolCall& call) {
                                  return read_deepseek_call(t, i, call, format);
                                });
    case ToolFormat::kimi_k2: return parse_kimi(text, final);
    case ToolFormat::minimax: return parse_call_section(text, kToolCallsOpen, {kToolCallsClose}, final, read_json_call);
  }
  return {};
}

std::vector<std::string> tool_call_markers(ToolFormat format) {
  const auto of = [](std::initializer_list<std::string_view> markers) {
    return std::vector<std::string>(markers.begin(), markers.end());
  };
  switch (format) {  // the opening marker first
    case ToolFormat::hermes:
    case ToolFormat::qwen3_coder: return of({kHermesOpen, kHermesClose});
    case ToolFormat::glm45:
      return of({kHermesOpen, kHermesClose, kGlmKeyOpen, kGlmKeyClose, kGlmValueOpen, kGlmValueClose});
    case ToolFormat::deepseek_v3:
    case ToolFormat::deepseek_v31:
      return of({kDeepSeekOpen, kDeepSeekClose, kDeepSeekCallOpen, kDeepSeekSep, kDeepSeekCallClose});
    case ToolFormat::kimi_k2: return of({kKimiOpen, kKimiClose, kKimiCallOpen, kKimiArguments, kKimiCallClose});
    // <|action_start|> is the control token; <|plugin|> follows it
    case ToolFormat::internlm: return of({kActionStart, kInternLmOpen.substr(kActionStart.size()), kInternLmClose});
    case ToolFormat::hunyuan_a13b:
    case ToolFormat::minimax: return of({kToolCallsOpen, kToolCallsClose});
    case ToolFormat::nemotron_json: return of({kNemotronOpen, kNemotronClose});
    case ToolFormat::seed_oss: return of({kSeedOpen, kSeedClose});
    case ToolFormat::llama3_json: return of({kPythonTag});
    case ToolFormat::mistral: return of({kMistralOpen});
    case ToolFormat::mistral_v11: return of({kMistralOpen, kMistralArgs});
    case ToolFormat::pythonic: return of({kPythonStart});
    case ToolFormat::phi4_mini: return of({kPhi4Open});
    case ToolFormat::granite: return of({kGraniteOpen});
    case ToolFormat::granite_20b_fc: return of({kFunctionCall});
    case ToolFormat::xlam: return {};  // a bare list
  }
  return {};
}

std::vector<std::string> tool_parser_markers(ToolFormat format) {
  std::vector<std::string> markers = tool_call_markers(format);
  const auto add = [&](std::initializer_list<std::string_view> more) {
    for (std::string_view m : more)
      if (std::find(markers.begin(), markers.end(), m) == markers.end()) markers.emplace_back(m);
  };
  if (format == ToolFormat::mistral || format == ToolFormat::mistral_v11) add({kMistralArgs, kMistralCallId});
  if (format == ToolFormat::xlam) add({kMistralOpen, kHermesOpen, kHermesClose});
  if (format == ToolFormat::kimi_k2) add({kKimiOpenSingular, kKimiCloseSingular});
  if (format == ToolFormat::pythonic) add({kPythonEnd});
  return markers;
}

std::string tool_calls_marker(ToolFormat format) {
  return format == ToolFormat::xlam ? "[" : tool_call_markers(format).front();
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
  // The arguments as XML parameters (xml_calls.h): Qwen3-Coder's <parameter=KEY>\nVALUE\n</parameter>\n,
  // Seed-OSS's <parameter=KEY>VALUE</parameter>\n, GLM's <arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n,
  // its newlines optional (GLM-4.7 writes none).
  grammar::XmlTags xml;
  Sequence newline;
  const bool function_blocks = format == ToolFormat::qwen3_coder || format == ToolFormat::seed_oss;
  if (format == ToolFormat::qwen3_coder)
    xml = {lit(kXmlParameterOpen), lit(">\n"), cat({lit("\n"), lit(kXmlParameterClose), lit("\n")}),
           std::string(kXmlParameterClose), ">\n", "<parameter=...> blocks"};
  if (format == ToolFormat::seed_oss)
    xml = {lit(kXmlParameterOpen), lit(">"), cat({lit(kXmlParameterClose), lit("\n")}), std::string(kXmlParameterClose),
           ">\n", "<parameter=...> blocks"};
  if (format == ToolFormat::glm45) {
    newline = {GrammarBuilder::ref(b.add_rule("newline", {{}, lit("\n")}))};
    xml = {lit(kGlmKeyOpen), cat({lit(kGlmKeyClose), newline, lit(kGlmValueOpen)}), cat({lit(kGlmValueClose), newline}),
           std::string(kGlmValueClose), "<", "<arg_key> / <arg_value> pairs"};
  }
  // One call, a branch per function.
  grammar::JsonGrammar python(b, {.syntax = grammar::LiteralSyntax::python});
  // The arguments' key: Llama's "parameters"; InternLM's either (its models write "parameters",
  // the template vLLM gives it "arguments").
  const Sequence arguments_key =
      format == ToolFormat::llama3_json ? lit("\"parameters\"")
      : format == ToolFormat::internlm
          ? Sequence{GrammarBuilder::ref(j.one_of_literals({"\"parameters\"", "\"arguments\""}))}
          : lit("\"arguments\"");
  const int32_t call = b.add_rule("call");
  for (size_t i = 0; i < functions.size(); ++i) {
    const ToolFunction& f = functions[i];
    const std::string at = concat("#/tools/", i, "/function");
    if (format == ToolFormat::pythonic) {  // name(key=value, ...)
      if (!grammar::python_keyword_name(f.name))
        throw grammar::GrammarError(at + "/name", "'" + f.name + "' cannot be called in Python: it is no "
                                                                 "identifier, or a keyword");
      const int32_t args = python.keyword_arguments(f.parameters, at + "/parameters");
      b.add_alternative(call, cat({lit(f.name), {GrammarBuilder::ref(args)}}));
      continue;
    }
    if (function_blocks) {  // <function=NAME>\n<parameter=...> blocks</function>
      const int32_t parameters = j.xml_parameters(f.parameters, xml, at + "/parameters");
      b.add_alternative(call, cat({lit(concat("<function=", f.name, ">\n")), {GrammarBuilder::ref(parameters)},
                                   lit("</function>")}));
      continue;
    }
    if (format == ToolFormat::glm45) {  // NAME\n<arg_key> / <arg_value> pairs
      const int32_t parameters = j.xml_parameters(f.parameters, xml, at + "/parameters");
      b.add_alternative(call, cat({lit(f.name), newline, {GrammarBuilder::ref(parameters)}}));
      continue;
    }
    const Element args = GrammarBuilder::ref(j.schema(f.parameters, at + "/parameters"));
    if (format == ToolFormat::deepseek_v3) {
      b.add_alternative(call, cat({lit(concat(kDeepSeekCallOpen, "function", kDeepSeekSep, f.name, "\n```json\n")),
                                   {args},
                                   lit(concat("\n```", kDeepSeekCallClose))}));
      continue;
    }
    if (format == ToolFormat::deepseek_v31) {
      b.add_alternative(call, cat({lit(concat(kDeepSeekCallOpen, f.name, kDeepSeekSep)), {args}, lit(kDeepSeekCallClose)}));
      continue;
    }
    if (format == ToolFormat::mistral_v11) {  // NAME[ARGS]{...}, after the call's own [TOOL_CALLS]
      b.add_alternative(call, cat({lit(f.name), lit(kMistralArgs), {args}}));
      continue;
    }
    if (format == ToolFormat::kimi_k2) {  // the id functions.NAME:INDEX, the index of up to 6 digits
      const Element index = GrammarBuilder::ref(b.repeat(b.bytes(ByteSet::range('0', '9')), 1, 6));
      b.add_alternative(call, cat({lit(concat(kKimiCallOpen, "functions.", f.name, ":")), {index}, lit(kKimiArguments),
                                   {args}, lit(kKimiCallClose)}));
      continue;
    }
    // {"name": "<function>", "arguments": <its parameters>}
    b.add_alternative(call, cat({lit("{"), ws, lit("\"name\""), ws, lit(":"), ws, j.value_literal(f.name), ws,
                                 lit(","), ws, arguments_key, ws, lit(":"), ws, {args}, ws, lit("}")}));
  }
  Sequence one = {GrammarBuilder::ref(call)}, separator = cat({ws, lit(","), ws});  // a list's
  const bool blocks = format == ToolFormat::hermes || function_blocks || format == ToolFormat::glm45 ||
                      format == ToolFormat::internlm || format == ToolFormat::granite_20b_fc;
  if (format == ToolFormat::hermes || format == ToolFormat::qwen3_coder)
    one = cat({lit(kHermesOpen), ws, one, ws, lit(kHermesClose)});
  if (format == ToolFormat::seed_oss) one = cat({lit(kSeedOpen), ws, one, ws, lit(kSeedClose)});
  if (format == ToolFormat::glm45) one = cat({lit(kHermesOpen), one, lit(kHermesClose)});
  if (format == ToolFormat::internlm) one = cat({lit(kInternLmOpen), lit("\n"), one, lit(kInternLmClose)});
  if (format == ToolFormat::granite_20b_fc) one = cat({lit(kFunctionCall), lit(" "), one});
  if (format == ToolFormat::mistral_v11) one = cat({lit(kMistralOpen), one});
  if (blocks || format == ToolFormat::deepseek_v3 || format == ToolFormat::deepseek_v31) separator = ws;
  if (format == ToolFormat::llama3_json) separator = cat({ws, lit(";"), ws});
  // Kimi's and Mistral's calls back to back, as their templates write them.
  if (format == ToolFormat::kimi_k2 || format == ToolFormat::mistral_v11) separator = {};
  if (format == ToolFormat::minimax) separator = lit("\n");  // a call a line
  const int32_t first = b.add_rule("tool-call", {one});
  const int32_t next = b.add_rule("tool-call-next", {cat({separator, one})});
  const int32_t more = b.repeat(GrammarBuilder::ref(next), 0, max_calls - 1);
  const Sequence calls = {GrammarBuilder::ref(first), GrammarBuilder::ref(more)};
  const Sequence list = cat({lit("["), ws, calls, ws, lit("]")});
  switch (format) {
    case ToolFormat::hermes:
    case ToolFormat::qwen3_coder:
    case ToolFormat::glm45:
    case ToolFormat::internlm:
    case ToolFormat::granite_20b_fc:
    case ToolFormat::mistral_v11:
    case ToolFormat::seed_oss: return b.add_rule("tool-calls", {calls});
    case ToolFormat::llama3_json:  // optionally after <|python_tag|>
      return b.add_rule("tool-calls", {calls, cat({lit(kPythonTag), ws, calls})});
    case ToolFormat::pythonic:  // optionally after <|python_start|>
      return b.add_rule("tool-calls", {list, cat({lit(kPythonStart), list})});
    case ToolFormat::mistral:
    case ToolFormat::phi4_mini:
    case ToolFormat::granite: return b.add_rule("tool-calls", {cat({lit(tool_calls_marker(format)), ws, list})});
    case ToolFormat::deepseek_v3:
    case ToolFormat::deepseek_v31:
      return b.add_rule("tool-calls", {cat({lit(kDeepSeekOpen), calls, lit(kDeepSeekClose)})});
    case ToolFormat::kimi_k2: return b.add_rule("tool-calls", {cat({lit(kKimiOpen), calls, lit(kKimiClose)})});
    case ToolFormat::minimax:
      return b.add_rule("tool-calls", {cat({lit(kToolCallsOpen), lit("\n"), calls, lit("\n"), lit(kToolCallsClose)})});
    case ToolFormat::hunyuan_a13b:
      return b.add_rule("tool-calls", {cat({lit(kToolCallsOpen), list, lit(kToolCallsClose)})});
    case ToolFormat::nemotron_json:
      return b.add_rule("tool-calls", {cat({lit(kNemotronOpen), list, lit(kNemotronClose)})});
    case ToolFormat::xlam: return b.add_rule("tool-calls", {list});
  }
  return -1;
}

int32_t tool_choice_auto_rule(grammar::JsonGrammar& j, ToolFormat format, int32_t calls) {
  GrammarBuilder& b = j.builder();
  if (format == ToolFormat::xlam) {
    // A reply that starts with "[" is calls; any other reply is text (white space first, then no
    // "[") in which none of the markers that may open calls occurs.
    ByteSet space, first;
    for (const char c : {' ', '\n', '\t', '\r'}) space.add(static_cast<uint8_t>(c));
    for (int c = 0; c < grammar::kFirstControlByte; ++c)  // text, never a control token's byte
      if (c != '[' && !space.has(static_cast<uint8_t>(c))) first.add(static_cast<uint8_t>(c));
    const std::vector<std::string_view> markers(std::begin(kXlamMarkers), std::end(kXlamMarkers));
    const int32_t text = b.text_without(markers, first);
    return b.add_rule("reply", {{GrammarBuilder::ref(calls)},
                                {GrammarBuilder::ref(b.repeat(b.bytes(space), 0, -1)), GrammarBuilder::ref(text)}});
  }
  if (format == ToolFormat::kimi_k2) {  // text that opens no section in either form (parse_kimi reads both)
    const int32_t words = b.text_without({kKimiOpen, kKimiOpenSingular}, ByteSet::range(0, 255));
    return b.add_rule("reply", {{GrammarBuilder::ref(words)}, {GrammarBuilder::ref(words), GrammarBuilder::ref(calls)}});
  }
  const std::string marker = tool_calls_marker(format);
  const std::vector<int32_t> text = b.text_without(marker);
  if (format != ToolFormat::llama3_json && format != ToolFormat::pythonic)
    return b.add_rule("reply",
                      {{GrammarBuilder::ref(text[0])}, {GrammarBuilder::ref(text[0]), GrammarBuilder::ref(calls)}});
  // Llama JSON and pythonic: a reply that starts with the calls' first byte ("{", "[") or the tag
  // is calls; any other reply is text.
  const char opening = format == ToolFormat::llama3_json ? '{' : '[';
  ByteSet other;
  for (int c = 0; c < grammar::kFirstControlByte; ++c)  // text, never a control token's byte
    if (c != opening && c != marker[0]) other.add(static_cast<uint8_t>(c));
  return b.add_rule("reply", {{GrammarBuilder::ref(calls)},
                              {},
                              {b.bytes(other), GrammarBuilder::ref(text[0])},
                              {b.bytes(ByteSet::of(static_cast<uint8_t>(marker[0]))), GrammarBuilder::ref(text[1])}});
}

}  // namespace difftx::serve
