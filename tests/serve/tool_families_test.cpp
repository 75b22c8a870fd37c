// The tool-call families beyond the first three (serve/tool_format.h: pythonic, phi4_mini,
// granite, deepseek_v3, deepseek_v31, qwen3_coder, glm45, kimi_k2), and every family's streaming
// and grammar: each recognised from its
// template's text, the fetched templates keeping their families; replies parsed into calls with
// the content around them, malformed calls kept as content; every cut of a reply, streamed a byte
// at a time or in two parts split anywhere, sends what the whole reply holds; and documents the
// calls grammar lets through at random (what a random-weight model constrained by it writes)
// always parse into calls of listed functions whose arguments validate.
#include <gtest/gtest.h>

#include <filesystem>

#include "chat/chat_template.h"
#include "data/data_paths.h"
#include "grammar/automaton.h"
#include "serve/reply_reader.h"
#include "support/schema_check.h"
#include "support/streamed_reply.h"
#include "support/tool_functions.h"

namespace difftx::serve {
namespace {

using testing::accepts;
using testing::Calls;
using testing::calls_of;
using testing::weather_and_add;

using nlohmann::json;
using nlohmann::ordered_json;

const std::string kDsOpen = "<｜tool▁calls▁begin｜>", kDsClose = "<｜tool▁calls▁end｜>";
const std::string kDsCall = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>", kDsEnd = "<｜tool▁call▁end｜>";

std::string deepseek_call(const std::string& name, const std::string& arguments) {
  return kDsCall + name + "\n```json\n" + arguments + "\n```" + kDsEnd;
}
std::string deepseek_v31_call(const std::string& name, const std::string& arguments) {
  return "<｜tool▁call▁begin｜>" + name + "<｜tool▁sep｜>" + arguments + kDsEnd;
}

const std::string kKimiOpen = "<|tool_calls_section_begin|>", kKimiClose = "<|tool_calls_section_end|>";
std::string kimi_call(const std::string& id, const std::string& arguments) {
  return "<|tool_call_begin|>" + id + "<|tool_call_argument_begin|>" + arguments + "<|tool_call_end|>";
}

const std::string kMistralOpen = "[TOOL_CALLS]";
std::string mistral_call(const std::string& name, const std::string& arguments, const std::string& id = "") {
  return kMistralOpen + name + (id.empty() ? "" : "[CALL_ID]" + id) + "[ARGS]" + arguments;
}

TEST(ToolFamilies, RecognisedFromTheirTemplates) {
  // Snippets of vLLM's example templates.
  EXPECT_EQ(tool_format_of_template("Environment: ipython\\n ... 'Respond in the format [func_name1(params_name1="
                                    "params_value1, params_name2=params_value2...), func_name2(params)] '"),
            ToolFormat::pythonic);  // Llama 3.2 pythonic, which says "ipython" as Llama's JSON templates do
  EXPECT_EQ(tool_format_of_template("- Use exact format: [func_name1(param1=value1, param2=value2), func_name2(...)]"),
            ToolFormat::pythonic);  // Llama 4
  EXPECT_EQ(tool_format_of_template("Example Format: [func_name1(params_name1=params_value1...)] <tool_response>"),
            ToolFormat::pythonic);  // Gemma 3
  EXPECT_EQ(tool_format_of_template("formatted as functools[{\"name\": [function name], \"arguments\": ...}, ...]"),
            ToolFormat::phi4_mini);
  EXPECT_EQ(tool_format_of_template("{{- '<|tool_call|> ' + {'name': tc.function.name}|tojson }}"),
            ToolFormat::granite);
  EXPECT_EQ(tool_format_of_template("<tools>...</tools> ... you should first print " + kDsOpen + " ... ```json"),
            ToolFormat::deepseek_v3);
  EXPECT_EQ(tool_format_of_template("{{'" + kDsOpen + "<｜tool▁call▁begin｜>'+ tool['function']['name'] + "
                                    "'<｜tool▁sep｜>' + tool['function']['arguments'] + '" + kDsEnd + "'}}"),
            ToolFormat::deepseek_v31);  // no fenced JSON: V3.1
  EXPECT_EQ(tool_format_of_template("{{- '\\n<tool_call>\\n<function=' + tool_call.name + '>\\n' }} ... "
                                    "{{- '<parameter=' + args_name + '>\\n' }}"),
            ToolFormat::qwen3_coder);  // Qwen3-Coder: <function=...> in <tool_call> blocks, not Hermes' JSON
  EXPECT_EQ(tool_format_of_template("Environment: ipython ... <function=example_function_name>{\"example_name\": "
                                    "\"example_value\"}</function> ... <|python_tag|>"),
            ToolFormat::llama3_json);  // Llama 3.1's user-defined calls: <function=...> without <tool_call>
  EXPECT_EQ(tool_format_of_template("<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>"
                                    "{arg-value-1}</arg_value> ... {{ '\\n<tool_call>' + tc.name }}"),
            ToolFormat::glm45);  // GLM-4.5 / 4.6: <arg_key> in <tool_call> blocks
  EXPECT_EQ(tool_format_of_template("{{- '<tool_call>' + tc.name -}}{% for k, v in _args.items() %}<arg_key>{{ k }}"
                                    "</arg_key><arg_value>{{ v }}</arg_value>{% endfor %}</tool_call>"),
            ToolFormat::glm45);  // GLM-4.7
  EXPECT_EQ(tool_format_of_template("<|tool_calls_section_begin|>{%- for tool_call in message['tool_calls'] -%}"
                                    "<|tool_call_begin|>{{ tool_call['id'] }}<|tool_call_argument_begin|>"),
            ToolFormat::kimi_k2);
  // Seed-OSS's instruction: the same <function=...> as Qwen3-Coder's, in <seed:tool_call> blocks.
  EXPECT_EQ(tool_format_of_template("<seed:tool_call>\n<function=example_function_name>\n<parameter="
                                    "example_parameter_1>value_1</parameter>\n</function>\n</seed:tool_call>"),
            ToolFormat::seed_oss);
  // Mistral Small 3.2's, Magistral's, Devstral's: a call's name, [ARGS], its arguments; Mistral
  // Nemo's a list after [TOOL_CALLS].
  EXPECT_EQ(tool_format_of_template("{%- for tool in message['tool_calls'] %}{%- set arguments = tool['function']"
                                    "['arguments'] %}{{- '[TOOL_CALLS]' + tool['function']['name'] + '[ARGS]' + "
                                    "arguments }}{%- endfor %}"),
            ToolFormat::mistral_v11);
  EXPECT_EQ(tool_format_of_template("{{- '[TOOL_CALLS][' }}{%- for tool_call in message.tool_calls %}"),
            ToolFormat::mistral);
  EXPECT_EQ(tool_format_name(*tool_format_named("llama4_json")), std::string("llama3_json"));
  for (const char* name : {"mistral_v11", "pythonic", "llama4_pythonic", "phi4_mini", "phi4_mini_json", "granite", "deepseek_v3",
                           "deepseek_v31", "qwen3_coder", "qwen3_xml", "glm45", "glm47", "kimi_k2", "seed_oss"})
    EXPECT_TRUE(tool_format_named(name).has_value()) << name;
  EXPECT_EQ(tool_format_name(*tool_format_named("phi4_mini_json")), std::string("phi4_mini"));
  EXPECT_EQ(tool_format_name(*tool_format_named("qwen3_xml")), std::string("qwen3_coder"));
  EXPECT_EQ(tool_format_name(*tool_format_named("glm47")), std::string("glm45"));
  EXPECT_FALSE(tool_format_named("deepseek").has_value());
  EXPECT_EQ(tool_format_names("|"),
            "hermes|llama3_json|mistral|mistral_v11|pythonic|phi4_mini|granite|deepseek_v3|deepseek_v31|qwen3_coder|glm45|kimi_k2|"
            "internlm|hunyuan_a13b|minimax|xlam|granite_20b_fc|nemotron_json|seed_oss");
}

// The real templates scripts/setup fetches map to the families they did before the new ones
// (DeepSeek V3's, which showed none, is now its own).
TEST(ToolFamilies, FetchedTemplatesKeepTheirFamilies) {
  const std::vector<std::pair<std::string, std::optional<ToolFormat>>> want = {
      {"qwen2_5", ToolFormat::hermes},       {"qwen3", ToolFormat::hermes},   {"mistral_nemo", ToolFormat::mistral},
      {"llama3_2", ToolFormat::llama3_json}, {"deepseek_v3", ToolFormat::deepseek_v3},
      {"llama3_1", std::nullopt},            {"gemma3", std::nullopt},        {"chatglm3", std::nullopt},
      {"internlm2", std::nullopt}};  // InternLM's own template takes no tools
  for (const auto& [name, format] : want) {
    const std::filesystem::path dir = data::data_root() / "hf" / name;
    if (!std::filesystem::exists(dir / "tokenizer_config.json")) GTEST_SKIP() << dir << " is missing (scripts/setup)";
    const std::optional<chat::ChatTemplate> t = chat::ChatTemplate::from_model_dir(dir.string());
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(tool_format_of_template(t->source), format) << name;
  }
}

TEST(ToolFamilies, ParsesPythonicCalls) {
  const auto parse = [](std::string_view text) { return parse_tool_calls(ToolFormat::pythonic, text, true); };
  ToolParse p = parse("[get_weather(city=\"Paris\", days=2), add(a=1, b=2)]");
  EXPECT_EQ(p.content, "");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"Paris","days":2})"}, {"add", R"({"a":1,"b":2})"}}));
  p = parse("<|python_start|>[get_weather(city='Paris', unit=None)]<|python_end|>");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"Paris","unit":null})"}}));
  EXPECT_EQ(p.content, "");
  p = parse("[note(text='it\\'s', meta={\"ok\": True, 'score': -1.5e1}, tags=['a', \"b\",],)]\n\nDone.");
  EXPECT_EQ(calls_of(p), (Calls{{"note", R"({"text":"it's","meta":{"ok":true,"score":-15.0},"tags":["a","b"]})"}}));
  EXPECT_EQ(p.content, "Done.");  // what follows the list is content
  EXPECT_EQ(calls_of(parse("[\n  now()\n]")), (Calls{{"now", "{}"}}));
  // Not calls: the whole reply is content.
  for (const char* text : {"The answer: [add(a=1, b=2)]", "[add(1, 2)]", "[]", "[math.sqrt(x=2)]", "[add(a=1, a=2)]",
                           "[add(a=x)]", "[add(class=1)]", "<|python_start|>add(a=1)", "[Note] text", "[ad"}) {
    p = parse(text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // A malformed second call: the first stays, the rest is content.
  p = parse("[add(a=1, b=2), sub(a=x)]");
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  EXPECT_EQ(p.content, "sub(a=x)]");
  // Cut short (max_tokens) once named: a call with the arguments read so far.
  EXPECT_EQ(calls_of(parse("[add(a=1")), (Calls{{"add", "{"}}));  // 1 may go on: 12
  EXPECT_EQ(calls_of(parse("[add(a=1, b='x")), (Calls{{"add", R"({"a":1)"}}));
  // Streaming: undecided or inside a call, nothing goes out yet as content.
  for (const char* text : {"", "<|pyth", "<|python_start|>", "[get_weather(city=\"Pa", "[add(a=1, b=2)]<|pyth"}) {
    p = parse_tool_calls(ToolFormat::pythonic, text, false);
    EXPECT_TRUE(p.pending) << text;
    EXPECT_EQ(p.content, "") << text;
  }
}

TEST(ToolFamilies, ParsesPhi4MiniAndGraniteLists) {
  const std::string add = R"({"name": "add", "arguments": {"a": 1, "b": 2}})";
  ToolParse p = parse_tool_calls(ToolFormat::phi4_mini,
                                 "Let me check. functools[" + add + R"(, {"name": "now", "parameters": {}}])", true);
  EXPECT_EQ(p.content, "Let me check. ");
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}, {"now", "{}"}}));
  EXPECT_EQ(parse_tool_calls(ToolFormat::phi4_mini, "I like functools.partial.", true).content,
            "I like functools.partial.");
  EXPECT_EQ(parse_tool_calls(ToolFormat::phi4_mini, "Use functo", false).content, "Use ");  // may begin the marker
  p = parse_tool_calls(ToolFormat::granite, "<|tool_call|>[" + add + "]", true);
  EXPECT_EQ(p.content, "");
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  EXPECT_EQ(parse_tool_calls(ToolFormat::granite, R"(<|tool_call|>[{"arguments": {}}])", true).content,
            R"(<|tool_call|>[{"arguments": {}}])");
  // Text after the list is content (Mistral's too).
  EXPECT_EQ(parse_tool_calls(ToolFormat::granite, "<|tool_call|>[" + add + "] Anything else?", true).content,
            "Anything else?");
  EXPECT_EQ(parse_tool_calls(ToolFormat::mistral, "[TOOL_CALLS][" + add + "]\n", true).content, "");
}

// What a template of Mistral's newer kind writes for an assistant's calls (this one difftx's own,
// printing them as Mistral Small 3.2's and Devstral's do) is its family's, and parses back into them.
TEST(ToolFamilies, MistralV11TemplatesCallsParseBack) {
  chat::ChatTemplate tmpl = chat::ChatTemplate::parse(
      "{%- for message in messages %}{%- if message['role'] == 'user' %}{{ '[INST]' + message['content'] + '[/INST]' }}"
      "{%- elif message['role'] == 'assistant' %}{{ message['content'] }}"
      "{%- for tool in message['tool_calls'] %}{%- set arguments = tool['function']['arguments'] %}"
      "{%- if arguments is not string %}{%- set arguments = arguments|tojson %}{%- endif %}"
      "{{- '[TOOL_CALLS]' + tool['function']['name'] + '[ARGS]' + arguments }}{%- endfor %}{{ eos_token }}"
      "{%- endif %}{%- endfor %}");
  tmpl.eos_token = "</s>";
  EXPECT_EQ(tool_format_of_template(tmpl.source), ToolFormat::mistral_v11);
  const auto messages = ordered_json::parse(R"([{"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": "Checking.", "tool_calls": [
        {"id": "abcDEF123", "type": "function", "function": {"name": "get_weather",
         "arguments": {"city": "Pa\"ris}[ARGS]", "days": [1, {"n": null}]}}},
        {"id": "abcDEF124", "type": "function", "function": {"name": "now", "arguments": {}}}]}])");
  const std::string rendered = tmpl.render(messages, false, ordered_json::object());
  const size_t from = rendered.find("[/INST]") + 7, to = rendered.rfind("</s>");
  ASSERT_LT(from, to) << rendered;
  const ToolParse p = parse_tool_calls(ToolFormat::mistral_v11, std::string_view(rendered).substr(from, to - from), true);
  EXPECT_EQ(p.content, "Checking.");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"Pa\"ris}[ARGS]","days":[1,{"n":null}]})"}, {"now", "{}"}}));
}

// Mistral's tokenizers from v11 on: NAME[ARGS]{...} after each [TOOL_CALLS], some with
// [CALL_ID]ID before [ARGS]; both Mistral families read both forms.
TEST(ToolFamilies, ParsesMistralV11Calls) {
  for (const ToolFormat format : {ToolFormat::mistral_v11, ToolFormat::mistral}) {
    SCOPED_TRACE(tool_format_name(format));
    const auto parse = [&](std::string_view text, bool final = true) { return parse_tool_calls(format, text, final); };
    ToolParse p = parse("Let me check." + mistral_call("get_weather", R"({"city": "Paris"})") +
                        mistral_call("add", R"({"a": 1, "b": 2})"));
    EXPECT_EQ(p.content, "Let me check.");
    EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"Paris"})"}, {"add", R"({"a":1,"b":2})"}}));
    // Nested objects, and strings that hold the markers, braces and brackets; white space between
    // the calls; the text after them is content.
    const std::string nested = R"({"text": "a [ARGS]} b [TOOL_CALLS]x[ARGS]{", "meta": {"tags": ["}", "]"], )"
                               R"("deep": {"ok": true, "n": [1, {"m": null}]}}})";
    p = parse(mistral_call("note", nested) + "\n " + mistral_call("now", "{}") + "\n\nDone.");
    EXPECT_EQ(calls_of(p), (Calls{{"note", R"({"text":"a [ARGS]} b [TOOL_CALLS]x[ARGS]{","meta":{"tags":["}","]"],)"
                                           R"("deep":{"ok":true,"n":[1,{"m":null}]}}})"},
                                  {"now", "{}"}}));
    EXPECT_EQ(p.content, "Done.");
    // The model's [CALL_ID]: its id where Mistral's templates take it (9 letters and digits), one
    // an earlier call has or any other none (the server makes one).
    p = parse(mistral_call("now", "{}", "abcDEF123") + mistral_call("now", "{}", "abcDEF123") +
              mistral_call("now", "{}", "call_1") + mistral_call("now", "{}", "a1b2c3d4e"));
    ASSERT_EQ(p.calls.size(), 4u);
    EXPECT_EQ(p.calls[0].id, "abcDEF123");
    EXPECT_EQ(p.calls[1].id, "");
    EXPECT_EQ(p.calls[2].id, "");
    EXPECT_EQ(p.calls[3].id, "a1b2c3d4e");
    // Without [ARGS] (Mistral's own decoding drops it; vLLM reads this too) and with white space.
    EXPECT_EQ(calls_of(parse(R"([TOOL_CALLS]add{"a": 1, "b": 2})")), (Calls{{"add", R"({"a":1,"b":2})"}}));
    EXPECT_EQ(calls_of(parse(R"([TOOL_CALLS] add [ARGS] {"a": 1})")), (Calls{{"add", R"({"a":1})"}}));
    // The older list is read by both.
    EXPECT_EQ(calls_of(parse(R"([TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}}])")),
              (Calls{{"add", R"({"a":1})"}}));
    // Malformed: the whole reply is content.
    const std::string long_name(65, 'f');
    for (const std::string& text :
         {mistral_call("get weather", "{}"), mistral_call("", "{}"), mistral_call("add", "[1]"),
          mistral_call("add", "\"{}\""), mistral_call("add", "{oops}"), mistral_call("add", "{\"a\": 1,}"),
          mistral_call(long_name, "{}"), mistral_call("add(", "{}"), mistral_call("add", "{}", "[x]"),
          kMistralOpen + "add[CALL_ID]abcDEF123{}", kMistralOpen + "add[ARG]{}", kMistralOpen + "[ARGS]{}",
          kMistralOpen + "add[ARGS]x{}", std::string("[TOOL_CALLS]{\"a\": 1}"), kMistralOpen}) {
      p = parse(text);
      EXPECT_TRUE(p.calls.empty()) << text;
      EXPECT_EQ(p.content, text);
    }
    // A malformed later call: those before it stay, the rest is content from its [TOOL_CALLS].
    p = parse(mistral_call("now", "{}") + mistral_call("add", "{oops}") + mistral_call("now", "{}"));
    EXPECT_EQ(calls_of(p), (Calls{{"now", "{}"}}));
    EXPECT_EQ(p.content, mistral_call("add", "{oops}") + mistral_call("now", "{}"));
    // Cut short (max_tokens) once its arguments have begun: a call with those written so far;
    // before that, content.
    EXPECT_EQ(calls_of(parse(mistral_call("add", R"({"a": 1, "b)"))), (Calls{{"add", R"({"a":1,"b)"}}));
    EXPECT_EQ(parse(mistral_call("now", "{}") + "[TOOL_CALLS]ad").content, "[TOOL_CALLS]ad");
    // Streaming: a marker begun, a name, an id or [ARGS] being written wait; a call goes out once
    // its arguments begin, with the model's id.
    for (const std::string& text : std::vector<std::string>{
             "Hi [TOOL_C", "Hi [TOOL_CALLS]", "Hi [TOOL_CALLS]get_wea", "Hi [TOOL_CALLS]add[CALL_", "Hi [TOOL_CALLS]add[A",
             "Hi [TOOL_CALLS]add[CALL_ID]abcDEF1", "Hi [TOOL_CALLS]add[ARGS]", "Hi " + mistral_call("now", "{}") + " [TOOL"}) {
      p = parse(text, false);
      EXPECT_TRUE(p.pending) << text;
      EXPECT_EQ(p.content, "Hi ") << text;
      EXPECT_FALSE(p.open) << text;
    }
    p = parse("Hi " + mistral_call("add", R"({"a": )", "abcDEF123"), false);
    EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":)"}}));
    EXPECT_EQ(p.calls.at(0).id, "abcDEF123");
    EXPECT_TRUE(p.open);
  }
}

TEST(ToolFamilies, ParsesDeepSeekV3Calls) {
  const std::string two = kDsOpen + deepseek_call("get_weather", R"({"city": "Paris"})") + "\n" +
                          deepseek_call("add", R"({"a": 1, "b": 2})") + kDsClose;
  ToolParse p = parse_tool_calls(ToolFormat::deepseek_v3, "Checking." + two, true);
  EXPECT_EQ(p.content, "Checking.");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"Paris"})"}, {"add", R"({"a":1,"b":2})"}}));
  // Without the fence, and without the closing marker (the turn ended at the model's end token).
  p = parse_tool_calls(ToolFormat::deepseek_v3, kDsOpen + kDsCall + "now\n{}" + kDsEnd, true);
  EXPECT_EQ(calls_of(p), (Calls{{"now", "{}"}}));
  EXPECT_EQ(p.content, "");
  // Malformed: arguments that are no object, a call cut short.
  for (const std::string& text : {kDsOpen + deepseek_call("add", "[1]") + kDsClose,
                                  kDsOpen + deepseek_call("add", "{oops}") + kDsClose, kDsOpen + kDsCall + "ad",
                                  kDsOpen + "<｜tool▁call▁begin｜>func\ntion<｜tool▁sep｜>add\n{}" + kDsEnd}) {
    p = parse_tool_calls(ToolFormat::deepseek_v3, text, true);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // V3.1: the name before the separator, the arguments after it, no fence.
  p = parse_tool_calls(ToolFormat::deepseek_v31,
                       "Checking." + kDsOpen + deepseek_v31_call("get_weather", R"({"city": "Paris"})") +
                           deepseek_v31_call("add", R"({"a": 1, "b": 2})") + kDsClose + " Done.",
                       true);
  EXPECT_EQ(p.content, "Checking.Done.");  // the white space after the calls goes, as for V3
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"Paris"})"}, {"add", R"({"a":1,"b":2})"}}));
  p = parse_tool_calls(ToolFormat::deepseek_v31, kDsOpen + "<｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": ", false);
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":)"}}));
  EXPECT_TRUE(p.open);
  p = parse_tool_calls(ToolFormat::deepseek_v31, kDsOpen + deepseek_call("add", R"({"a": 1})") + kDsClose, true);
  EXPECT_TRUE(p.calls.empty());  // V3's form is not V3.1's
  p = parse_tool_calls(ToolFormat::deepseek_v3, "Hi <｜tool▁ca", false);
  EXPECT_EQ(p.content, "Hi ");
  EXPECT_TRUE(p.pending);
}

// Functions whose parameters read Qwen3-Coder's raw values as each type.
const std::vector<ToolFunction> kTypedFunctions = {
    {"get_weather", ordered_json::parse(R"({"type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]})")},
    {"plan", ordered_json::parse(R"({"type": "object", "properties": {"ratio": {"type": "number"},
        "urgent": {"type": "boolean"}, "tags": {"type": "array"}, "meta": {"type": "object"},
        "note": {"type": ["string", "null"]}, "none": {"type": "null"}, "level": {"$ref": "#/$defs/level"}},
        "$defs": {"level": {"type": "integer"}}, "additionalProperties": {"type": "integer"}})")}};

using Parameters = std::vector<std::pair<std::string, std::string>>;

// A <function=NAME> call in its block (`tag`): the parameters as written, each value between
// `around`s.
std::string function_call(const std::string& tag, const std::string& around, const std::string& name,
                          const Parameters& parameters) {
  std::string out = "<" + tag + ">\n<function=" + name + ">\n";
  for (const auto& [key, value] : parameters) out += "<parameter=" + key + ">" + around + value + around + "</parameter>\n";
  return out + "</function>\n</" + tag + ">";
}
// A Qwen3-Coder call block: each KEY\nVALUE\n.
std::string xml_call(const std::string& name, const Parameters& parameters) {
  return function_call("tool_call", "\n", name, parameters);
}

TEST(ToolFamilies, ParsesQwen3CoderCallsByTheirTypes) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::qwen3_coder, text, final, kTypedFunctions);
  };
  ToolParse p = parse("I'll check.\n" + xml_call("get_weather", {{"city", "New York"}, {"days", "3"}}) + "\n" +
                      xml_call("plan", {{"ratio", "0.50"}, {"urgent", "True"}, {"tags", "[\"a\", \"b\"]"},
                                        {"meta", "{'k': None, \"v\": [1.5]}"}, {"note", "null"}, {"none", "NULL"},
                                        {"level", " 2 "}, {"extra", "7"}}));
  EXPECT_EQ(p.content, "I'll check.\n");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"New York","days":3})"},
                                {"plan", R"({"ratio":0.50,"urgent":true,"tags":["a","b"],"meta":{"k":null,"v":[1.5]},)"
                                         R"("note":null,"none":null,"level":2,"extra":7})"}}));
  // Raw text stays a string: one newline less at each end; a string's "null"; a value that is not
  // of its type; a parameter the schema does not list; any parameter of a function not offered.
  p = parse(xml_call("get_weather", {{"city", "\nline 1\n  line 2\n"}, {"days", "three"}}) +
            xml_call("plan", {{"note", "Null island"}, {"ratio", "1/2"}, {"urgent", "yes"}, {"tags", "a, b"}}) +
            xml_call("other", {{"x", "1"}}));
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"\nline 1\n  line 2\n","days":"three"})"},
                                {"plan", R"({"note":"Null island","ratio":"1/2","urgent":"yes","tags":"a, b"})"},
                                {"other", R"({"x":"1"})"}}));
  p = parse(xml_call("get_weather", {{"city", "null"}}) + xml_call("now", {}));
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"null"})"}, {"now", "{}"}}));
  // Where no string is allowed a JSON string inside may hold </parameter>; in a string it ends the value.
  p = parse(xml_call("plan", {{"meta", "{\"html\": \"</parameter>\"}"}}));
  EXPECT_EQ(calls_of(p), (Calls{{"plan", R"({"meta":{"html":"</parameter>"}})"}}));
  // Not calls: content from the block on.
  for (const std::string text :
       {"<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>",
        "<tool_call>\n<function=>\n</function>\n</tool_call>",
        "<tool_call>\n<function=now\n>\n</function>\n</tool_call>",
        "<tool_call>\n<function=add>\n<param=a>\n1\n</param>\n</function>\n</tool_call>",
        "<tool_call>\n<function=add>\n</function>\nx</tool_call>", "<tool_call>\n<function=ad"}) {
    p = parse(text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  p = parse(xml_call("now", {}) + "<tool_call>\n<function=add\n>");  // a malformed second: the first stays
  EXPECT_EQ(calls_of(p), (Calls{{"now", "{}"}}));
  EXPECT_EQ(p.content, "<tool_call>\n<function=add\n>");
  // Cut short once named: the parameters read so far; while streaming, open.
  const std::string cut =
      "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n<parameter=city>\nPa";
  EXPECT_EQ(calls_of(parse(cut)), (Calls{{"get_weather", R"({"days":3)"}}));
  p = parse(cut, false);
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"days":3)"}}));
  EXPECT_TRUE(p.open);
  EXPECT_EQ(calls_of(parse("<tool_call>\n<function=now>\n</func")), (Calls{{"now", "{"}}));
  for (const char* text :
       {"Hi <tool_", "<tool_call>\n<function=get_we", "<tool_call>\n<function=now>\n</function>\n</tool"}) {
    p = parse(text, false);
    EXPECT_TRUE(p.pending) << text;
    EXPECT_EQ(p.content, std::string(text).starts_with("Hi") ? "Hi " : "") << text;
  }
}

// A Seed-OSS call block: each value inline.
std::string seed_call(const std::string& name, const Parameters& parameters) {
  return function_call("seed:tool_call", "", name, parameters);
}

// Seed-OSS's calls read as Qwen3-Coder's, in their own blocks.
TEST(ToolFamilies, ParsesSeedOssCallsByTheirTypes) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::seed_oss, text, final, kTypedFunctions);
  };
  ToolParse p = parse("I'll check.\n" + seed_call("get_weather", {{"city", "New York"}, {"days", "3"}}) + "\n" +
                      seed_call("plan", {{"ratio", "0.5"}, {"meta", "{'k': None}"}, {"note", "null"}}));
  EXPECT_EQ(p.content, "I'll check.\n");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"New York","days":3})"},
                                {"plan", R"({"ratio":0.5,"meta":{"k":null},"note":null})"}}));
  // Qwen3-Coder's blocks are not Seed-OSS's: content.
  p = parse(xml_call("now", {}));
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.content, xml_call("now", {}));
  p = parse("Hi <seed:tool", false);
  EXPECT_TRUE(p.pending);
  EXPECT_EQ(p.content, "Hi ");
}

// A GLM-4.5 call block: NAME, then <arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n per
// parameter as written (GLM-4.7: without the newlines).
std::string glm_call(const std::string& name, const std::vector<std::pair<std::string, std::string>>& parameters,
                     bool newlines = true) {
  const std::string nl = newlines ? "\n" : "";
  std::string out = "<tool_call>" + name + nl;
  for (const auto& [key, value] : parameters)
    out += "<arg_key>" + key + "</arg_key>" + nl + "<arg_value>" + value + "</arg_value>" + nl;
  return out + "</tool_call>";
}

TEST(ToolFamilies, ParsesGlm45CallsByTheirTypes) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::glm45, text, final, kTypedFunctions);
  };
  // GLM-4.5's form, then GLM-4.7's; the values read as Qwen3-Coder's, those that may not be
  // strings less white space at their ends.
  ToolParse p = parse("I'll check.\n" + glm_call("get_weather", {{"city", "New York"}, {"days", "3"}}) + "\n" +
                      glm_call("plan",
                               {{"ratio", "0.50"}, {"urgent", "\nTrue "}, {"tags", "[\"a\", \"b\"]"},
                                {"meta", "{'k': None, \"v\": [1.5]}"}, {"note", "null"}, {"none", "NULL"},
                                {"level", " 2 "}, {"urgent2", "\n7\n"}},
                               false));
  EXPECT_EQ(p.content, "I'll check.\n");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"New York","days":3})"},
                                {"plan", R"({"ratio":0.50,"urgent":true,"tags":["a","b"],"meta":{"k":null,"v":[1.5]},)"
                                         R"("note":null,"none":null,"level":2,"urgent2":7})"}}));
  for (const ToolCall& c : p.calls) EXPECT_EQ(c.id, "");  // the server makes the ids
  // Raw text stays a string, white space and all; a value not of its type; a parameter the schema
  // does not list; any parameter of a function not offered.
  p = parse(glm_call("get_weather", {{"city", "\nline 1\n  line 2\n"}, {"days", "three"}}) +
            glm_call("plan", {{"note", "Null island"}, {"ratio", "1/2"}, {"tags", "a, b"}}) +
            glm_call("other", {{"x", "1"}}));
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"\nline 1\n  line 2\n","days":"three"})"},
                                {"plan", R"({"note":"Null island","ratio":"1/2","tags":"a, b"})"},
                                {"other", R"({"x":"1"})"}}));
  EXPECT_EQ(calls_of(parse(glm_call("now", {}) + glm_call("now", {}, false) + "<tool_call>now</tool_call>")),
            (Calls{{"now", "{}"}, {"now", "{}"}, {"now", "{}"}}));
  // Where no string is allowed a JSON string inside may hold </arg_value>.
  p = parse(glm_call("plan", {{"meta", "{\"html\": \"</arg_value>\"}"}}));
  EXPECT_EQ(calls_of(p), (Calls{{"plan", R"({"meta":{"html":"</arg_value>"}})"}}));
  // Not calls: content from the block on.
  for (const std::string text :
       {"<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>",
        "<tool_call>\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
        "<tool_call>get weather\n</tool_call>", "<tool_call>add\n<arg_key>a</arg_key>\n1\n</tool_call>",
        "<tool_call>add\n<arg_key>a\n<arg_value>1</arg_value>\n</tool_call>",
        "<tool_call>add\n<arg_key>a</arg_key><arg_value>1</arg_value>x</tool_call>", "<tool_call>ad"}) {
    p = parse(text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // Cut short once named: the parameters read so far; while streaming, open.
  const std::string cut =
      "<tool_call>get_weather\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n<arg_key>city</arg_key>\n"
      "<arg_value>Pa";
  EXPECT_EQ(calls_of(parse(cut)), (Calls{{"get_weather", R"({"days":3)"}}));
  p = parse(cut, false);
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"days":3)"}}));
  EXPECT_TRUE(p.open);
  EXPECT_EQ(calls_of(parse("<tool_call>now\n</tool_c")), (Calls{{"now", "{}"}}));
  for (const char* text : {"Hi <tool_", "<tool_call>get_we", "<tool_call>now\n</tool"}) {
    p = parse(text, false);
    EXPECT_TRUE(p.pending) << text;
    EXPECT_EQ(p.content, std::string(text).starts_with("Hi") ? "Hi " : "") << text;
  }
}

TEST(ToolFamilies, ParsesKimiK2CallsWithTheirIds) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::kimi_k2, text, final);
  };
  ToolParse p = parse("Checking." + kKimiOpen + kimi_call("functions.get_weather:0", R"({"city": "Paris"})") +
                      kimi_call("functions.add:1", R"({"a": 1, "b": 2})") + kKimiClose + " Done.");
  EXPECT_EQ(p.content, "Checking.Done.");
  EXPECT_EQ(calls_of(p), (Calls{{"get_weather", R"({"city":"Paris"})"}, {"add", R"({"a":1,"b":2})"}}));
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].id, "functions.get_weather:0");  // the id the conversation's template prints back
  EXPECT_EQ(p.calls[1].id, "functions.add:1");
  // The name after the last '.' (or the whole of it) as vLLM reads it; white space around the id
  // and the arguments; no closing marker (the turn ended at the model's end token); an id an
  // earlier call has is none.
  p = parse(kKimiOpen + kimi_call("add:3", "{}") + "\n<|tool_call_begin|> functions.tools.add:12 "
            "<|tool_call_argument_begin|> {\"a\": 1} <|tool_call_end|>" + kimi_call("add:3", "{}"));
  EXPECT_EQ(calls_of(p), (Calls{{"add", "{}"}, {"add", R"({"a":1})"}, {"add", "{}"}}));
  ASSERT_EQ(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[0].id, "add:3");
  EXPECT_EQ(p.calls[1].id, "functions.tools.add:12");
  EXPECT_EQ(p.calls[2].id, "");
  // The section's markers in the singular, as Kimi K2 sometimes writes them (vLLM reads them too).
  p = parse("Ok.<|tool_call_section_begin|>" + kimi_call("functions.add:0", "{}") + "<|tool_call_section_end|> Done.");
  EXPECT_EQ(p.content, "Ok.Done.");
  EXPECT_EQ(calls_of(p), (Calls{{"add", "{}"}}));
  p = parse("Ok.<|tool_call_section_begin|>" + kimi_call("functions.add:0", "{}") + kKimiClose + " Done.");
  EXPECT_EQ(p.content, "Ok.Done.");  // either form closes either
  EXPECT_EQ(calls_of(p), (Calls{{"add", "{}"}}));
  p = parse("Ok.<|tool_call_s", false);
  EXPECT_TRUE(p.pending);
  EXPECT_EQ(p.content, "Ok.");
  // Malformed: no index, an index that is no number, a name OpenAI does not allow, arguments that
  // are no object.
  for (const std::string& text :
       {kKimiOpen + kimi_call("functions.add", "{}") + kKimiClose, kKimiOpen + kimi_call("functions.add:x", "{}"),
        kKimiOpen + kimi_call("functions.a b:0", "{}"), kKimiOpen + kimi_call("functions.:0", "{}"),
        kKimiOpen + kimi_call("functions.add:0", "[1]"), kKimiOpen + kimi_call("functions.add:0", "{oops}"),
        kKimiOpen + "<|tool_call_begin|>functions.ad"}) {
    p = parse(text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // Streaming: named (with its id) once the id is written.
  p = parse(kKimiOpen + "<|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"a\": ", false);
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":)"}}));
  EXPECT_EQ(p.calls.at(0).id, "functions.add:0");
  EXPECT_TRUE(p.open);
  for (const std::string& text :
       std::vector<std::string>{"Hi <|tool_calls_sec", "Hi " + kKimiOpen + "<|tool_call_begin|>functions.add:0"}) {
    p = parse(text, false);
    EXPECT_TRUE(p.pending) << text;
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, "Hi ") << text;
  }
}

ReplyFormat reply_format(ToolFormat format, const std::vector<ToolFunction>& functions = kTypedFunctions) {
  return {std::nullopt, false, format, functions};
}

void expect_same(const ReplyParts& got, const ReplyParts& want, const std::string& what) {
  EXPECT_EQ(got.content, want.content) << what;
  ASSERT_EQ(got.calls.size(), want.calls.size()) << what;
  for (size_t i = 0; i < want.calls.size(); ++i) {
    EXPECT_EQ(got.calls[i].name, want.calls[i].name) << what;
    EXPECT_EQ(got.calls[i].arguments, want.calls[i].arguments) << what;
    EXPECT_EQ(got.calls[i].id, want.calls[i].id) << what;
  }
}

// Every cut of each reply (max_tokens may end it anywhere) streamed a byte at a time, and the
// whole reply in two parts split at every byte, send what the whole (cut) reply holds.
TEST(ToolFamilies, StreamedInEverySplitAddsUpToTheWhole) {
  const std::string add = R"({"name": "add", "arguments": {"a": 1, "b": 2}})";
  const std::vector<std::pair<ToolFormat, std::string>> replies = {
      {ToolFormat::hermes, "Sure.<tool_call>\n" + add + "\n</tool_call>\n<tool_call>\n" + add + "\n</tool_call>"},
      {ToolFormat::llama3_json,
       R"(<|python_tag|>{"name": "add", "parameters": {"a": 1}}; {"name": "now", "parameters": {}})"},
      {ToolFormat::mistral, "[TOOL_CALLS][" + add + ", " + add + "] ok"},
      {ToolFormat::mistral_v11,
       "Sure." + mistral_call("get_weather", R"({"city": "Pa[ARGS]}ris", "d": {"x": [1, {}]}})", "abcDEF123") +
           mistral_call("add", R"({"a": 1, "b": 2})") + "\n" + mistral_call("now", "{}", "abcDEF123") + " ok"},
      {ToolFormat::mistral_v11, mistral_call("now", "{}") + "[TOOL_CALLS]get weather[ARGS]{}"},
      {ToolFormat::mistral_v11, "[TOOL_CALLS]now{} [TOOL_CALLS] [x]"},
      {ToolFormat::mistral, mistral_call("add", R"({"a": 1})") + "[TOOL_CALLS][" + add + "]"},
      {ToolFormat::pythonic, "[get_weather(city='Pa\\'ris', days=2), add(a=-1, b=2.5e0, c=[None, {'k': True}])]"},
      {ToolFormat::pythonic, "<|python_start|>[now(), add(a=1, b=\"\"\"x\"\"\")]<|python_end|>\nDone."},
      {ToolFormat::pythonic, "[add(a=1), (b=x)] [Note]"},
      {ToolFormat::pythonic, "Plain [text] <b>"},
      {ToolFormat::phi4_mini, "Okay functools[" + add + ",\n " + add + "]"},
      {ToolFormat::phi4_mini, "functools is a module; functools[oops]"},
      {ToolFormat::granite, "<|tool_call|>[" + add + "]"},
      {ToolFormat::deepseek_v3, "Let me." + kDsOpen + deepseek_call("get_weather", R"({"city": "Paris"})") + "\n" +
                                    deepseek_call("add", R"({"a": 1, "b": 2})") + kDsClose + " More."},
      {ToolFormat::deepseek_v3, kDsOpen + deepseek_call("add", "{\"a\": 1}") + "\n" + "<｜tool▁call▁begin｜>oops\n```json\n[]"},
      {ToolFormat::deepseek_v31, "Let me." + kDsOpen + deepseek_v31_call("get_weather", R"({"city": "Paris"})") +
                                     deepseek_v31_call("add", R"({"a": 1, "b": 2})") + kDsClose + " More."},
      {ToolFormat::qwen3_coder, "Let me.\n" + xml_call("get_weather", {{"city", "Pa</ris>"}, {"days", "3"}}) + "\n" +
                                    xml_call("plan", {{"meta", "{\"a\": \"</parameter>\"}"}, {"urgent", "false"}})},
      {ToolFormat::qwen3_coder, xml_call("now", {}) + "<tool_call>\n<function=pl\nan>\n</function>\n</tool_call>"},
      {ToolFormat::glm45, "Let me.\n" + glm_call("get_weather", {{"city", "Pa</ris>\n"}, {"days", "3"}}) + "\n" +
                              glm_call("plan", {{"meta", "{\"a\": \"</arg_value>\"}"}, {"urgent", "false"}}, false)},
      {ToolFormat::glm45, glm_call("now", {}) + "<tool_call>get weather</tool_call>"},
      {ToolFormat::kimi_k2, "Let me." + kKimiOpen + kimi_call("functions.get_weather:0", R"({"city": "Paris"})") +
                                kimi_call("functions.add:1", R"({"a": 1, "b": 2})") + kKimiClose + " More."},
      {ToolFormat::kimi_k2, "Ok.<|tool_call_section_begin|>" + kimi_call("functions.now:0", "{}") +
                                "<|tool_call_section_end|> Done."},
      {ToolFormat::kimi_k2, "<|tool_calls_section_begin|>" + kimi_call("functions.now:0", "{}") +
                                "<|tool_call_section_end|> Done."},
      {ToolFormat::kimi_k2, kKimiOpen + kimi_call("functions.now:0", "{}") + kimi_call("functions.now:0", "{}") +
                                "<|tool_call_begin|>functions.now<|tool_call_argument_begin|>{}"},
      {ToolFormat::internlm, "Sure.<|action_start|><|plugin|>\n" + add + "<|action_end|>\n<|action_start|><|plugin|>\n"
                             R"({"name": "now", "parameters": {}})" "<|action_end|>"},
      {ToolFormat::internlm, "<|action_start|><|interpreter|>\nx<|action_end|><|action_start|><|plugin|>\n{oops"},
      {ToolFormat::hunyuan_a13b, "Ok.\n<tool_calls>[" + add + ", " + add + "]</tool_calls> More."},
      {ToolFormat::hunyuan_a13b, "助手：好的。<tool_calls>[" + add + "]</tool_calls>"},
      {ToolFormat::minimax, "Ok.\n<tool_calls>\n" + add + "\n" + add + "\n</tool_calls>"},
      {ToolFormat::minimax, "<tool_calls>\n" + add + "\n{\"name\": oops}"},
      {ToolFormat::xlam, "\n[" + add + ", " + add + "] ok"},
      {ToolFormat::xlam, "Sure:\n```json\n[" + add + "]\n```\nDone. ```\n[" + add + "]```"},
      {ToolFormat::xlam, "[TOOL_CALLS] [" + add + "] <tool_call>[]"},
      {ToolFormat::xlam, "[Note] ```python\nx = [1]\n```"},
      {ToolFormat::granite_20b_fc, "Ok. <function_call> " + add + "\n<function_call> " + add + " <|endoftext|>"},
      {ToolFormat::granite_20b_fc, "<function_call> " + add + "<function_call> oops"},
      {ToolFormat::nemotron_json, "Ok.\n\n<TOOLCALL>[" + add + ", " + add + "]</TOOLCALL>\nMore."},
      {ToolFormat::nemotron_json, "<TOOLCALL>" + add + ", " + add + "</TOOLCALL>"},
      {ToolFormat::seed_oss, "Let me.\n" + seed_call("get_weather", {{"city", "Pa</ris>"}, {"days", "3"}}) + "\n" +
                                 seed_call("now", {}) + "<seed:tool_call>\n<function=pl\nan>"}};
  for (const auto& [format, reply] : replies) {
    const ReplyFormat f = reply_format(format);
    for (size_t cut = 0; cut <= reply.size(); ++cut) {
      const std::string text = reply.substr(0, cut);
      std::vector<size_t> bytes;
      for (size_t i = 1; i < text.size(); ++i) bytes.push_back(i);
      expect_same(testing::streamed_reply(f, text, bytes), read_reply(f, text),
                  std::string(tool_format_name(format)) + ": " + text);
    }
    const ReplyParts whole = read_reply(f, reply);
    for (size_t split = 0; split <= reply.size(); ++split)
      expect_same(testing::streamed_reply(f, reply, {split}), whole, reply + " split at " + std::to_string(split));
  }
}

std::shared_ptr<const grammar::Grammar> calls_grammar(ToolFormat format, const std::vector<ToolFunction>& functions,
                                                      int64_t max_calls, bool automatic) {
  grammar::GrammarBuilder b;
  grammar::JsonGrammar j(b);
  const int32_t calls = tool_calls_rule(j, format, functions, max_calls);
  return b.build(automatic ? tool_choice_auto_rule(j, format, calls) : calls);
}

TEST(ToolFamilies, CallGrammarsTakeWhatModelsWriteAndOnlyValidCalls) {
  const auto pythonic = calls_grammar(ToolFormat::pythonic, weather_and_add(), 2, false);
  for (const char* text : {"[get_weather(city=\"Paris\")]", "[add(a=1, b=2), get_weather(city=\"x\")]",
                           "<|python_start|>[add(a=1,b=-2)]", "[\n  add(a=1, b=2)\n]"})
    EXPECT_TRUE(accepts(pythonic, text)) << text;
  for (const char* text : {"[sub(a=1, b=2)]", "[add(a=1)]", "[add(a=\"1\", b=2)]", "[add(a=1, b=2), add(a=1, b=2), "
                           "add(a=1, b=2)]", "[]", "[get_weather(city='Paris')]", "[add(a=1, b=2)]<|python_end|>",
                           "[add(a = 1, b=2)]", "add(a=1, b=2)", "[get_weather(city=\"\\/\")]"})
    EXPECT_FALSE(accepts(pythonic, text)) << text;
  const auto pythonic_auto = calls_grammar(ToolFormat::pythonic, weather_and_add(), 2, true);
  for (const char* text : {"", "It is sunny.", "<b>bold</b> [1]", "[add(a=1, b=2)]"})
    EXPECT_TRUE(accepts(pythonic_auto, text)) << text;
  for (const char* text : {"[Note] text", "text <|python_start|>[add(a=1, b=2)]"})
    EXPECT_FALSE(accepts(pythonic_auto, text)) << text;

  const std::string add = R"({"name": "add", "arguments": {"a": 1, "b": 2}})";
  // Mistral from v11 on: NAME[ARGS]{...} after each [TOOL_CALLS], back to back, as its templates write them.
  const auto mistral = calls_grammar(ToolFormat::mistral_v11, weather_and_add(), 2, false);
  for (const std::string& text :
       {mistral_call("add", R"({"a": 1, "b": 2})"),
        mistral_call("get_weather", R"({"city": "Pa[ARGS]ris"})") + mistral_call("add", R"({"a":1,"b":-2})")})
    EXPECT_TRUE(accepts(mistral, text)) << text;
  for (const std::string& text :
       {mistral_call("sub", R"({"a": 1, "b": 2})"), mistral_call("add", R"({"a": 1})"),
        mistral_call("add", R"({"a": 1, "b": 2})", "abcDEF123"), "[TOOL_CALLS][" + add + "]",
        std::string(R"([TOOL_CALLS]add{"a": 1, "b": 2})"),
        mistral_call("add", R"({"a": 1, "b": 2})") + "\n" + mistral_call("add", R"({"a": 1, "b": 2})"),
        mistral_call("add", R"({"a": 1, "b": 2})") + mistral_call("add", R"({"a": 1, "b": 2})") +
            mistral_call("add", R"({"a": 1, "b": 2})")})  // three calls: more than the turn's two
    EXPECT_FALSE(accepts(mistral, text)) << text;
  const auto mistral_auto = calls_grammar(ToolFormat::mistral_v11, weather_and_add(), 2, true);
  EXPECT_TRUE(accepts(mistral_auto, "Let me see." + mistral_call("add", R"({"a": 1, "b": 2})")));
  EXPECT_TRUE(accepts(mistral_auto, "It is [sunny] {ok}."));
  EXPECT_FALSE(accepts(mistral_auto, "Let me see.[TOOL_CALLS][" + add + "]"));

  const auto phi4 = calls_grammar(ToolFormat::phi4_mini, weather_and_add(), 2, true);
  EXPECT_TRUE(accepts(phi4, "functools[" + add + "]"));
  EXPECT_TRUE(accepts(phi4, "Sure. functools[" + add + ", " + add + "]"));
  EXPECT_FALSE(accepts(phi4, "The functools module."));
  EXPECT_FALSE(accepts(phi4, R"(functools[{"name": "add", "arguments": {"a": 1}}])"));
  const auto granite = calls_grammar(ToolFormat::granite, weather_and_add(), 2, false);
  EXPECT_TRUE(accepts(granite, "<|tool_call|>[" + add + "]"));
  EXPECT_FALSE(accepts(granite, "<|tool_call|>" + add));
  const auto deepseek = calls_grammar(ToolFormat::deepseek_v3, weather_and_add(), 2, false);
  EXPECT_TRUE(accepts(deepseek, kDsOpen + deepseek_call("add", R"({"a": 1, "b": 2})") + "\n" +
                                    deepseek_call("get_weather", R"({"city": "Paris"})") + kDsClose));
  EXPECT_FALSE(accepts(deepseek, kDsOpen + deepseek_call("add", R"({"a": 1, "b": 2})")));
  EXPECT_FALSE(accepts(deepseek, kDsOpen + deepseek_call("sub", R"({"a": 1, "b": 2})") + kDsClose));
  EXPECT_FALSE(accepts(deepseek, kDsOpen + deepseek_call("add", R"({"a": 1})") + kDsClose));
  const auto v31 = calls_grammar(ToolFormat::deepseek_v31, weather_and_add(), 2, false);
  EXPECT_TRUE(accepts(v31, kDsOpen + deepseek_v31_call("add", R"({"a": 1, "b": 2})") +
                               deepseek_v31_call("get_weather", R"({"city": "Paris"})") + kDsClose));
  EXPECT_FALSE(accepts(v31, kDsOpen + deepseek_call("add", R"({"a": 1, "b": 2})") + kDsClose));
  EXPECT_FALSE(accepts(v31, kDsOpen + deepseek_v31_call("add", R"({"a": 1})") + kDsClose));

  const auto qwen = calls_grammar(ToolFormat::qwen3_coder, weather_and_add(), 2, false);
  for (const std::string& text :
       std::vector<std::string>{xml_call("add", {{"a", "1"}, {"b", "-2"}}),
                                xml_call("get_weather", {{"city", "\nSão </parameter\n<b>"}}),
                                xml_call("get_weather", {{"city", ""}}) + "\n" +
                                    xml_call("add", {{"a", "1"}, {"b", "2"}})})
    EXPECT_TRUE(accepts(qwen, text)) << text;
  for (const std::string& text :
       std::vector<std::string>{
           xml_call("add", {{"a", "1"}}), xml_call("add", {{"b", "2"}, {"a", "1"}}),
           xml_call("add", {{"a", "x"}, {"b", "2"}}), xml_call("add", {{"a", "1"}, {"b", "2"}, {"c", "3"}}),
           xml_call("sub", {{"a", "1"}, {"b", "2"}}), xml_call("get_weather", {{"city", "a</parameter>b"}}),
           xml_call("get_weather", {}),
           "<tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</tool_call>",
           xml_call("add", {{"a", "1"}, {"b", "2"}}) + xml_call("add", {{"a", "1"}, {"b", "2"}}) +
               xml_call("add", {{"a", "1"}, {"b", "2"}})})  // three calls: more than the turn's two
    EXPECT_FALSE(accepts(qwen, text)) << text;
  const auto qwen_auto = calls_grammar(ToolFormat::qwen3_coder, weather_and_add(), 2, true);
  EXPECT_TRUE(accepts(qwen_auto, "Let me see.\n" + xml_call("add", {{"a", "1"}, {"b", "2"}})));
  EXPECT_TRUE(accepts(qwen_auto, "It is <b>sunny</b>."));
  EXPECT_FALSE(accepts(qwen_auto, "Let me see.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>"));

  // Seed-OSS: Qwen3-Coder's calls with inline values, in their own blocks.
  const auto seed = calls_grammar(ToolFormat::seed_oss, weather_and_add(), 2, false);
  for (const std::string& text : std::vector<std::string>{
           seed_call("add", {{"a", "1"}, {"b", "-2"}}),
           seed_call("get_weather", {{"city", "São\n<b>"}}) + "\n" + seed_call("add", {{"a", "1"}, {"b", "2"}})})
    EXPECT_TRUE(accepts(seed, text)) << text;
  for (const std::string& text :
       std::vector<std::string>{seed_call("add", {{"a", "1"}}), seed_call("sub", {{"a", "1"}, {"b", "2"}}),
                                seed_call("get_weather", {{"city", "a</parameter>b"}}),
                                xml_call("add", {{"a", "1"}, {"b", "2"}})})
    EXPECT_FALSE(accepts(seed, text)) << text;
  const auto seed_auto = calls_grammar(ToolFormat::seed_oss, weather_and_add(), 2, true);
  EXPECT_TRUE(accepts(seed_auto, "Let me see.\n" + seed_call("add", {{"a", "1"}, {"b", "2"}})));
  EXPECT_FALSE(accepts(seed_auto, "Let me see.\n<seed:tool_call>\n{\"name\": \"add\"}\n</seed:tool_call>"));

  // GLM: either version's newlines; raw text that holds no </arg_value>.
  const auto glm = calls_grammar(ToolFormat::glm45, weather_and_add(), 2, false);
  for (const std::string& text :
       std::vector<std::string>{glm_call("add", {{"a", "1"}, {"b", "-2"}}),
                                glm_call("add", {{"a", "1"}, {"b", "2"}}, false),
                                glm_call("get_weather", {{"city", "\nSão </arg_value\n<b> "}}),
                                "<tool_call>add<arg_key>a</arg_key>\n<arg_value>1</arg_value><arg_key>b</arg_key>"
                                "<arg_value>2</arg_value>\n</tool_call>",
                                glm_call("get_weather", {{"city", ""}}) + "\n" +
                                    glm_call("add", {{"a", "1"}, {"b", "2"}}, false)})
    EXPECT_TRUE(accepts(glm, text)) << text;
  for (const std::string& text : std::vector<std::string>{
           glm_call("add", {{"a", "1"}}), glm_call("add", {{"b", "2"}, {"a", "1"}}),
           glm_call("add", {{"a", "x"}, {"b", "2"}}), glm_call("add", {{"a", " 1"}, {"b", "2"}}),
           glm_call("add", {{"a", "1"}, {"b", "2"}, {"c", "3"}}), glm_call("sub", {{"a", "1"}, {"b", "2"}}),
           glm_call("get_weather", {{"city", "a</arg_value>b"}}), glm_call("get_weather", {}),
           "<tool_call>\nadd\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>2"
           "</arg_value>\n</tool_call>",
           "<tool_call>add\n\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>2"
           "</arg_value>\n</tool_call>",
           glm_call("add", {{"a", "1"}, {"b", "2"}}) + glm_call("add", {{"a", "1"}, {"b", "2"}}) +
               glm_call("add", {{"a", "1"}, {"b", "2"}})})
    EXPECT_FALSE(accepts(glm, text)) << text;
  const auto glm_auto = calls_grammar(ToolFormat::glm45, weather_and_add(), 2, true);
  EXPECT_TRUE(accepts(glm_auto, "Let me see.\n" + glm_call("add", {{"a", "1"}, {"b", "2"}})));
  EXPECT_TRUE(accepts(glm_auto, "It is <b>sunny</b>."));
  EXPECT_FALSE(accepts(glm_auto, "Let me see.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>"));

  // Kimi: the id's index is the model's; the calls as its templates write them, back to back.
  const auto kimi = calls_grammar(ToolFormat::kimi_k2, weather_and_add(), 2, false);
  EXPECT_TRUE(accepts(kimi, kKimiOpen + kimi_call("functions.add:0", R"({"a": 1, "b": 2})") +
                                kimi_call("functions.get_weather:17", R"({"city":"Paris"})") + kKimiClose));
  for (const std::string& text :
       {kKimiOpen + kimi_call("functions.add:0", R"({"a": 1, "b": 2})"),
        kKimiOpen + kimi_call("add:0", R"({"a": 1, "b": 2})") + kKimiClose,
        kKimiOpen + kimi_call("functions.add:", R"({"a": 1, "b": 2})") + kKimiClose,
        kKimiOpen + kimi_call("functions.add:1234567", R"({"a": 1, "b": 2})") + kKimiClose,
        kKimiOpen + kimi_call("functions.add:0", R"({"a": 1})") + kKimiClose,
        kKimiOpen + kimi_call("functions.sub:0", R"({"a": 1, "b": 2})") + kKimiClose,
        kKimiOpen + kimi_call("functions.add:0", R"({"a": 1, "b": 2})") + "\n" +
            kimi_call("functions.add:1", R"({"a": 1, "b": 2})") + kKimiClose})
    EXPECT_FALSE(accepts(kimi, text)) << text;
  // Free text opens no section in either form: the singular one would be read as calls unchecked.
  const auto kimi_auto = calls_grammar(ToolFormat::kimi_k2, weather_and_add(), 2, true);
  EXPECT_TRUE(accepts(kimi_auto, "Sure. " + kKimiOpen + kimi_call("functions.add:0", R"({"a": 1, "b": 2})") + kKimiClose));
  EXPECT_TRUE(accepts(kimi_auto, "It is <|tool_call sunny."));
  EXPECT_FALSE(accepts(kimi_auto, "Sure. <|tool_call_section_begin|>" + kimi_call("functions.sub:0", "{}")));
}

// Where the grammar of one call to f(parameters) in `format` refuses them (GrammarError::where),
// or "accepted".
std::string refused_at(ToolFormat format, const char* parameters) {
  try {
    calls_grammar(format, {{"f", ordered_json::parse(parameters)}}, 1, false);
  } catch (const grammar::GrammarError& e) {
    return e.where;
  }
  return "accepted";
}

// What Qwen3-Coder's form cannot write is a GrammarError at its place in the tools.
TEST(ToolFamilies, Qwen3CoderParametersThatCannotBeWritten) {
  const auto where = [](const char* parameters) { return refused_at(ToolFormat::qwen3_coder, parameters); };
  const std::string at = "#/tools/0/function/parameters";
  EXPECT_EQ(where(R"({"type": "object", "properties": {"a>b": {}}})"), at + "/properties/a>b");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}})"),
            at + "/properties/x/anyOf");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"x": {"$ref": "#/$defs/s"}},
                      "$defs": {"s": {"oneOf": [{"type": "string"}, {"type": "null"}]}}})"),
            at + "/$defs/s/oneOf");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"x": {"enum": ["</parameter>", 1]}}})"),
            at + "/properties/x/enum");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"x": {"type": "string", "format": "idn-email"}}})"),
            at + "/properties/x/format");
  EXPECT_EQ(where(R"({"type": "string"})"), at + "/type");
  EXPECT_EQ(where(R"({"anyOf": [{"type": "object"}]})"), at + "/anyOf");
  // The reader takes a value's type from the root's properties: an allOf there is refused.
  EXPECT_EQ(where(R"({"type": "object", "allOf": [{"properties": {"n": {"type": "integer"}}}]})"), at + "/allOf");
  // Values that are never strings take any of JSON's forms; those that may be, the raw forms.
  EXPECT_EQ(where(R"({"type": "object", "properties": {"x": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                      "y": {"type": ["string", "integer"], "minimum": 3, "pattern": "^a"},
                      "z": {"type": "string", "format": "uuid"}, "w": true}})"),
            "accepted");
}

// GLM's tags: a property named with '<' cannot be written; '>' can.
TEST(ToolFamilies, Glm45ParametersThatCannotBeWritten) {
  const auto where = [](const char* parameters) { return refused_at(ToolFormat::glm45, parameters); };
  const std::string at = "#/tools/0/function/parameters";
  EXPECT_EQ(where(R"({"type": "object", "properties": {"a<b": {}}})"), at + "/properties/a<b");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}})"),
            at + "/properties/x/anyOf");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"x": {"enum": ["</arg_value>", 1]}}})"),
            at + "/properties/x/enum");
  EXPECT_EQ(where(R"({"type": "string"})"), at + "/type");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"a>b": {"enum": ["</parameter>"]}, "c\nd": {}}})"),
            "accepted");
}

TEST(ToolFamilies, PythonicCallsNeedIdentifiers) {
  const auto where = [](const std::vector<ToolFunction>& functions) {
    try {
      calls_grammar(ToolFormat::pythonic, functions, 1, false);
    } catch (const grammar::GrammarError& e) {
      return e.where;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(where({weather_and_add()[0], {"get-time", weather_and_add()[0].parameters}}), "#/tools/1/function/name");
  EXPECT_EQ(where({{"lambda", weather_and_add()[0].parameters}}), "#/tools/0/function/name");
  EXPECT_EQ(where({{"f", ordered_json::parse(R"({"type": "object", "properties": {"first name": {}}})")}}),
            "#/tools/0/function/parameters/properties/first name");
  // The JSON families take any names.
  EXPECT_NO_THROW(calls_grammar(ToolFormat::hermes, {{"get-time", weather_and_add()[0].parameters}}, 1, false));
}

// Functions whose arguments exercise every kind of value.
const std::vector<ToolFunction> kRichFunctions = {
    {"get_weather", ordered_json::parse(R"({"type": "object",
        "properties": {"city": {"type": "string", "maxLength": 12},
        "unit": {"enum": ["celsius", "fahrenheit", null]}, "days": {"type": "integer", "minimum": -3, "maximum": 14}},
        "required": ["city"], "additionalProperties": false})")},
    {"note", ordered_json::parse(R"({"type": "object", "properties": {"text": {"type": "string", "maxLength": 6},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "maxItems": 2},
        "meta": {"type": "object", "properties": {"ok": {"type": "boolean"}, "score": {"type": ["number", "null"]}},
                 "required": ["ok"], "additionalProperties": false}},
        "required": ["text"], "additionalProperties": {"type": "integer", "maximum": 99}})")},
    {"now", ordered_json::parse(R"({"type": "object", "properties": {}, "additionalProperties": false})")}};

// XML parameters' values of every kind (Qwen3-Coder's, GLM's): raw text by pattern, format,
// length, const and enum with null, the others as JSON ($ref'd too).
const std::vector<ToolFunction> kXmlFunctions = {
    {"plan", ordered_json::parse(R"({"type": "object", "properties": {
        "title": {"type": "string", "pattern": "^[a-c<]{1,4}$"}, "when": {"type": "string", "format": "date"},
        "mail": {"type": "string", "format": "email"},
        "note": {"type": ["string", "null"], "maxLength": 5}, "mode": {"const": "fast"},
        "unit": {"type": ["string", "null"], "enum": ["C", "null", "NULL", null, 3]}, "urgent": {"type": "boolean"},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1}, "level": {"$ref": "#/$defs/level"},
        "steps": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {"n": {"type": "integer"}},
                  "required": ["n"], "additionalProperties": false}},
        "nothing": {"type": "null"}, "size": {"allOf": [{"$ref": "#/$defs/level"}, {"maximum": 2}]},
        "tag": {"allOf": [{"type": ["string", "null"]}, {"maxLength": 3}]}},
        "required": ["title", "urgent"], "additionalProperties": false,
        "$defs": {"level": {"type": "integer", "minimum": 1, "maximum": 3}}})")}};

// A random-weight model constrained by a family's grammar: documents the automaton lets through
// at random, `required` (only calls) and `auto`: text, or text that opens calls (the walk made
// to open them, which it seldom does by chance). Each parses into the text and 1 to 3 calls of
// listed functions whose arguments validate; streamed a byte at a time, it sends the same.
TEST(ToolFamilies, EveryCallTheGrammarLetsThroughParsesAndValidates) {
  Rng rng(5);
  std::vector<std::pair<ToolFormat, const std::vector<ToolFunction>*>> runs;
  for (const ToolFormat format : {ToolFormat::hermes, ToolFormat::llama3_json, ToolFormat::mistral,
                                  ToolFormat::mistral_v11, ToolFormat::pythonic, ToolFormat::phi4_mini, ToolFormat::granite,
                                  ToolFormat::deepseek_v3, ToolFormat::deepseek_v31, ToolFormat::qwen3_coder,
                                  ToolFormat::glm45, ToolFormat::kimi_k2, ToolFormat::internlm,
                                  ToolFormat::hunyuan_a13b, ToolFormat::minimax, ToolFormat::xlam,
                                  ToolFormat::granite_20b_fc, ToolFormat::nemotron_json, ToolFormat::seed_oss})
    runs.emplace_back(format, &kRichFunctions);
  runs.emplace_back(ToolFormat::qwen3_coder, &kXmlFunctions);
  runs.emplace_back(ToolFormat::glm45, &kXmlFunctions);
  runs.emplace_back(ToolFormat::seed_oss, &kXmlFunctions);
  for (const auto& [format, functions] : runs) {
    // Where calls may only start the reply, their first byte opens them; elsewhere the marker after some text.
    const bool at_start = format == ToolFormat::pythonic || format == ToolFormat::xlam;
    const std::string opening = format == ToolFormat::llama3_json ? "{"
                                : at_start                       ? "["
                                                                 : "Sure. " + tool_calls_marker(format);
    const ReplyFormat reply = reply_format(format, *functions);
    for (const std::string mode : {"required", "auto", "auto with calls"}) {
      const bool automatic = mode != "required", calls = mode != "auto";
      grammar::Automaton a(calls_grammar(format, *functions, 3, automatic));
      const std::string content = mode == "auto with calls" && opening.size() > 1 ? "Sure. " : "";
      int finished = 0;
      for (int i = 0; i < 100; ++i) {
        const auto doc = testing::random_document(a, rng, 0.3, 4000, mode == "auto with calls" ? opening : "");
        if (!doc) continue;
        ++finished;
        const std::string what = std::string(tool_format_name(format)) + " " + mode + ": " + *doc;
        const ToolParse p = parse_tool_calls(format, *doc, true, *functions);
        if (calls) {
          ASSERT_EQ(p.content, content) << what;
          ASSERT_GE(p.calls.size(), 1u) << what;
        } else {
          ASSERT_EQ(p.content, *doc) << what;  // random text seldom opens calls
        }
        ASSERT_LE(p.calls.size(), 3u) << what;
        for (const ToolCall& call : p.calls) {
          const auto f = std::find_if(functions->begin(), functions->end(),
                                      [&](const ToolFunction& t) { return t.name == call.name; });
          ASSERT_NE(f, functions->end()) << what;
          ASSERT_EQ(testing::schema_violation(json::parse(f->parameters.dump()), json::parse(call.arguments)), "")
              << what << "\n" << call.arguments;
        }
        std::vector<size_t> bytes;
        for (size_t k = 1; k < doc->size(); ++k) bytes.push_back(k);
        expect_same(testing::streamed_reply(reply, *doc, bytes), read_reply(reply, *doc), what);
      }
      EXPECT_GE(finished, 70) << tool_format_name(format) << " " << mode;
    }
  }
}

}  // namespace
}  // namespace difftx::serve
