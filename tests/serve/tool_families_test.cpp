// The tool-call families beyond the first three (serve/tool_format.h: pythonic, phi4_mini,
// granite, deepseek_v3), and every family's streaming and grammar: each recognised from its
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

namespace difftx::serve {
namespace {

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
  for (const char* name :
       {"pythonic", "llama4_pythonic", "phi4_mini", "phi4_mini_json", "granite", "deepseek_v3", "deepseek_v31"})
    EXPECT_TRUE(tool_format_named(name).has_value()) << name;
  EXPECT_EQ(tool_format_name(*tool_format_named("phi4_mini_json")), std::string("phi4_mini"));
  EXPECT_FALSE(tool_format_named("deepseek").has_value());
  EXPECT_EQ(tool_format_names("|"), "hermes|llama3_json|mistral|pythonic|phi4_mini|granite|deepseek_v3|deepseek_v31");
}

// The real templates scripts/setup fetches map to the families they did before the new ones
// (DeepSeek V3's, which showed none, is now its own).
TEST(ToolFamilies, FetchedTemplatesKeepTheirFamilies) {
  const std::vector<std::pair<std::string, std::optional<ToolFormat>>> want = {
      {"qwen2_5", ToolFormat::hermes},       {"qwen3", ToolFormat::hermes},   {"mistral_nemo", ToolFormat::mistral},
      {"llama3_2", ToolFormat::llama3_json}, {"deepseek_v3", ToolFormat::deepseek_v3},
      {"llama3_1", std::nullopt},            {"gemma3", std::nullopt},        {"chatglm3", std::nullopt}};
  for (const auto& [name, format] : want) {
    const std::filesystem::path dir = data::data_root() / "hf" / name;
    if (!std::filesystem::exists(dir / "tokenizer_config.json")) GTEST_SKIP() << dir << " is missing (scripts/setup)";
    const std::optional<chat::ChatTemplate> t = chat::ChatTemplate::from_model_dir(dir.string());
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(tool_format_of_template(t->source), format) << name;
  }
}

std::vector<std::pair<std::string, std::string>> calls_of(const ToolParse& p) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ToolCall& c : p.calls) out.emplace_back(c.name, c.arguments);
  return out;
}
using Calls = std::vector<std::pair<std::string, std::string>>;

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

ReplyParts streamed(ToolFormat format, std::string_view text, const std::vector<size_t>& cuts) {
  return testing::streamed_reply(ReplyFormat{std::nullopt, false, format}, text, cuts);
}

void expect_same(const ReplyParts& got, const ReplyParts& want, const std::string& what) {
  EXPECT_EQ(got.content, want.content) << what;
  ASSERT_EQ(got.calls.size(), want.calls.size()) << what;
  for (size_t i = 0; i < want.calls.size(); ++i) {
    EXPECT_EQ(got.calls[i].name, want.calls[i].name) << what;
    EXPECT_EQ(got.calls[i].arguments, want.calls[i].arguments) << what;
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
                                     deepseek_v31_call("add", R"({"a": 1, "b": 2})") + kDsClose + " More."}};
  for (const auto& [format, reply] : replies) {
    for (size_t cut = 0; cut <= reply.size(); ++cut) {
      const std::string text = reply.substr(0, cut);
      std::vector<size_t> bytes;
      for (size_t i = 1; i < text.size(); ++i) bytes.push_back(i);
      expect_same(streamed(format, text, bytes), read_reply(ReplyFormat{std::nullopt, false, format}, text),
                  std::string(tool_format_name(format)) + ": " + text);
    }
    const ReplyParts whole = read_reply(ReplyFormat{std::nullopt, false, format}, reply);
    for (size_t split = 0; split <= reply.size(); ++split)
      expect_same(streamed(format, reply, {split}), whole, reply + " split at " + std::to_string(split));
  }
}

const std::vector<ToolFunction> kFunctions = {
    {"get_weather", ordered_json::parse(R"({"type": "object", "properties": {"city": {"type": "string"}},
                                           "required": ["city"], "additionalProperties": false})")},
    {"add", ordered_json::parse(R"({"type": "object",
                                   "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                   "required": ["a", "b"], "additionalProperties": false})")}};

std::shared_ptr<const grammar::Grammar> calls_grammar(ToolFormat format, const std::vector<ToolFunction>& functions,
                                                      int64_t max_calls, bool automatic) {
  grammar::GrammarBuilder b;
  grammar::JsonGrammar j(b);
  const int32_t calls = tool_calls_rule(j, format, functions, max_calls);
  return b.build(automatic ? tool_choice_auto_rule(j, format, calls) : calls);
}

bool accepts(const std::shared_ptr<const grammar::Grammar>& g, std::string_view text) {
  grammar::Automaton a(g);
  return testing::accepts(a, text);
}

TEST(ToolFamilies, CallGrammarsTakeWhatModelsWriteAndOnlyValidCalls) {
  const auto pythonic = calls_grammar(ToolFormat::pythonic, kFunctions, 2, false);
  for (const char* text : {"[get_weather(city=\"Paris\")]", "[add(a=1, b=2), get_weather(city=\"x\")]",
                           "<|python_start|>[add(a=1,b=-2)]", "[\n  add(a=1, b=2)\n]"})
    EXPECT_TRUE(accepts(pythonic, text)) << text;
  for (const char* text : {"[sub(a=1, b=2)]", "[add(a=1)]", "[add(a=\"1\", b=2)]", "[add(a=1, b=2), add(a=1, b=2), "
                           "add(a=1, b=2)]", "[]", "[get_weather(city='Paris')]", "[add(a=1, b=2)]<|python_end|>",
                           "[add(a = 1, b=2)]", "add(a=1, b=2)", "[get_weather(city=\"\\/\")]"})
    EXPECT_FALSE(accepts(pythonic, text)) << text;
  const auto pythonic_auto = calls_grammar(ToolFormat::pythonic, kFunctions, 2, true);
  for (const char* text : {"", "It is sunny.", "<b>bold</b> [1]", "[add(a=1, b=2)]"})
    EXPECT_TRUE(accepts(pythonic_auto, text)) << text;
  for (const char* text : {"[Note] text", "text <|python_start|>[add(a=1, b=2)]"})
    EXPECT_FALSE(accepts(pythonic_auto, text)) << text;

  const std::string add = R"({"name": "add", "arguments": {"a": 1, "b": 2}})";
  const auto phi4 = calls_grammar(ToolFormat::phi4_mini, kFunctions, 2, true);
  EXPECT_TRUE(accepts(phi4, "functools[" + add + "]"));
  EXPECT_TRUE(accepts(phi4, "Sure. functools[" + add + ", " + add + "]"));
  EXPECT_FALSE(accepts(phi4, "The functools module."));
  EXPECT_FALSE(accepts(phi4, R"(functools[{"name": "add", "arguments": {"a": 1}}])"));
  const auto granite = calls_grammar(ToolFormat::granite, kFunctions, 2, false);
  EXPECT_TRUE(accepts(granite, "<|tool_call|>[" + add + "]"));
  EXPECT_FALSE(accepts(granite, "<|tool_call|>" + add));
  const auto deepseek = calls_grammar(ToolFormat::deepseek_v3, kFunctions, 2, false);
  EXPECT_TRUE(accepts(deepseek, kDsOpen + deepseek_call("add", R"({"a": 1, "b": 2})") + "\n" +
                                    deepseek_call("get_weather", R"({"city": "Paris"})") + kDsClose));
  EXPECT_FALSE(accepts(deepseek, kDsOpen + deepseek_call("add", R"({"a": 1, "b": 2})")));
  EXPECT_FALSE(accepts(deepseek, kDsOpen + deepseek_call("sub", R"({"a": 1, "b": 2})") + kDsClose));
  EXPECT_FALSE(accepts(deepseek, kDsOpen + deepseek_call("add", R"({"a": 1})") + kDsClose));
  const auto v31 = calls_grammar(ToolFormat::deepseek_v31, kFunctions, 2, false);
  EXPECT_TRUE(accepts(v31, kDsOpen + deepseek_v31_call("add", R"({"a": 1, "b": 2})") +
                               deepseek_v31_call("get_weather", R"({"city": "Paris"})") + kDsClose));
  EXPECT_FALSE(accepts(v31, kDsOpen + deepseek_call("add", R"({"a": 1, "b": 2})") + kDsClose));
  EXPECT_FALSE(accepts(v31, kDsOpen + deepseek_v31_call("add", R"({"a": 1})") + kDsClose));
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
  EXPECT_EQ(where({kFunctions[0], {"get-time", kFunctions[0].parameters}}), "#/tools/1/function/name");
  EXPECT_EQ(where({{"lambda", kFunctions[0].parameters}}), "#/tools/0/function/name");
  EXPECT_EQ(where({{"f", ordered_json::parse(R"({"type": "object", "properties": {"first name": {}}})")}}),
            "#/tools/0/function/parameters/properties/first name");
  // The JSON families take any names.
  EXPECT_NO_THROW(calls_grammar(ToolFormat::hermes, {{"get-time", kFunctions[0].parameters}}, 1, false));
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

// A random-weight model constrained by a family's grammar: documents the automaton lets through
// at random, `required` (only calls) and `auto`: text, or text that opens calls (the walk made
// to open them, which it seldom does by chance). Each parses into the text and 1 to 3 calls of
// listed functions whose arguments validate; streamed a byte at a time, it sends the same.
TEST(ToolFamilies, EveryCallTheGrammarLetsThroughParsesAndValidates) {
  Rng rng(5);
  for (const ToolFormat format : {ToolFormat::hermes, ToolFormat::llama3_json, ToolFormat::mistral,
                                  ToolFormat::pythonic, ToolFormat::phi4_mini, ToolFormat::granite,
                                  ToolFormat::deepseek_v3, ToolFormat::deepseek_v31}) {
    // Where calls may only start the reply, their first byte opens them; elsewhere the marker after some text.
    const std::string opening = format == ToolFormat::llama3_json ? "{"
                                : format == ToolFormat::pythonic  ? "["
                                                                  : "Sure. " + tool_calls_marker(format);
    for (const std::string mode : {"required", "auto", "auto with calls"}) {
      const bool automatic = mode != "required", calls = mode != "auto";
      grammar::Automaton a(calls_grammar(format, kRichFunctions, 3, automatic));
      const std::string content = mode == "auto with calls" && opening.size() > 1 ? "Sure. " : "";
      int finished = 0;
      for (int i = 0; i < 100; ++i) {
        const auto doc = testing::random_document(a, rng, 0.3, 4000, mode == "auto with calls" ? opening : "");
        if (!doc) continue;
        ++finished;
        const std::string what = std::string(tool_format_name(format)) + " " + mode + ": " + *doc;
        const ToolParse p = parse_tool_calls(format, *doc, true);
        if (calls) {
          ASSERT_EQ(p.content, content) << what;
          ASSERT_GE(p.calls.size(), 1u) << what;
        } else {
          ASSERT_EQ(p.content, *doc) << what;  // random text seldom opens calls
        }
        ASSERT_LE(p.calls.size(), 3u) << what;
        for (const ToolCall& call : p.calls) {
          const auto f = std::find_if(kRichFunctions.begin(), kRichFunctions.end(),
                                      [&](const ToolFunction& t) { return t.name == call.name; });
          ASSERT_NE(f, kRichFunctions.end()) << what;
          ASSERT_EQ(testing::schema_violation(json::parse(f->parameters.dump()), json::parse(call.arguments)), "")
              << what;
        }
        std::vector<size_t> bytes;
        for (size_t k = 1; k < doc->size(); ++k) bytes.push_back(k);
        expect_same(streamed(format, *doc, bytes), read_reply(ReplyFormat{std::nullopt, false, format}, *doc), what);
      }
      EXPECT_GE(finished, 70) << tool_format_name(format) << " " << mode;
    }
  }
}

}  // namespace
}  // namespace difftx::serve
