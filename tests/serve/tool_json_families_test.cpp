// The families whose calls are JSON inside markers, after the first ones (serve/tool_format.h:
// internlm, hunyuan_a13b, minimax, xlam, granite_20b_fc, nemotron_json): each recognised from its
// template's text, vLLM's templates keeping or getting their families (DIFFTX_TOOL_TEMPLATES=DIR,
// a folder of them); replies read as leniently as vLLM reads them into calls and the content
// around them, malformed calls kept as content; each grammar taking the form its template teaches
// and only calls of listed functions whose arguments validate. Their streaming and random walks of
// their grammars are in tool_families_test.cpp with the other families'.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "grammar/automaton.h"
#include "serve/reply_reader.h"
#include "support/schema_check.h"
#include "support/tool_functions.h"

namespace difftx::serve {
namespace {

using testing::accepts;
using testing::Calls;
using testing::calls_of;
using testing::weather_and_add;

using nlohmann::ordered_json;

const std::string kWeather = R"({"name": "get_weather", "arguments": {"city": "Paris"}})";
const std::string kAdd = R"({"name": "add", "arguments": {"a": 1, "b": 2}})";
const Calls kBoth = {{"get_weather", R"({"city":"Paris"})"}, {"add", R"({"a":1,"b":2})"}};

TEST(ToolJsonFamilies, RecognisedFromTheirTemplates) {
  // Snippets of vLLM's example templates.
  EXPECT_EQ(tool_format_of_template("{%- for tool_call in message.tool_calls %}{{- \"<|action_start|><|plugin|>\\n\" }}"
                                    "{{- '{\"name\": \"' + function.name + '\", ' }}"),
            ToolFormat::internlm);
  EXPECT_EQ(tool_format_of_template("如果你决定调用任何函数，你必须将其格式化为<tool_calls>[{\"name\": \"func_name1\", "
                                    "\"arguments\": {\"argument1\": \"value1\"}},...]</tool_calls>"),
            ToolFormat::hunyuan_a13b);
  EXPECT_EQ(tool_format_of_template("please respond with <tool_calls></tool_calls> XML tags ... <tool_calls>\\n"
                                    "{\"name\": <tool-name>, \"arguments\": <args-json-object>}\\n...\\n</tool_calls>"
                                    "{%- if message.role == 'ipython' %}"),
            ToolFormat::minimax);  // no list after <tool_calls>: not Hunyuan's
  EXPECT_EQ(tool_format_of_template("When using tools, make calls in a single JSON array: \\n\\n[{\"name\": "
                                    "\"tool_call_name\", \"arguments\": {...}}] ... message.role == 'ipython'"),
            ToolFormat::xlam);  // xLAM's Llama template says "ipython" without Llama's "parameters"
  EXPECT_EQ(tool_format_of_template("{{- ', \"parameters\": ' }} ... {{- '<function_call> ' + {'name': "
                                    "tc.function.name, 'arguments': tc.function.arguments}|tojson }}"),
            ToolFormat::granite_20b_fc);
  EXPECT_EQ(tool_format_of_template("{{- '<TOOLCALL>[{{\"name\": \"tool_name1\", \"arguments\": \"tool_args1\"}}' -}}"),
            ToolFormat::nemotron_json);
  // OLMo 3's pythonic calls in <function_calls> are none of these.
  EXPECT_FALSE(tool_format_of_template("wrapped in <function_calls></function_calls> XML tags").has_value());
  for (const auto& [name, format] : std::vector<std::pair<const char*, ToolFormat>>{
           {"internlm", ToolFormat::internlm},
           {"hunyuan_a13b", ToolFormat::hunyuan_a13b},
           {"minimax", ToolFormat::minimax},
           {"xlam", ToolFormat::xlam},
           {"granite_20b_fc", ToolFormat::granite_20b_fc},
           {"granite-20b-fc", ToolFormat::granite_20b_fc},  // vLLM's name
           {"nemotron_json", ToolFormat::nemotron_json}})
    EXPECT_EQ(tool_format_named(name), format) << name;
  EXPECT_EQ(tool_format_name(ToolFormat::granite_20b_fc), std::string("granite_20b_fc"));
}

// vLLM's example templates (DIFFTX_TOOL_TEMPLATES=DIR, a copy of its examples/ folder; see
// tests/fixtures/chat/tool_templates/README.md): those of the new families get theirs, those
// near them (the same markers' cousins, "ipython", "parameters") keep theirs. The others cannot
// change: the new families are recognised only where no earlier one is.
TEST(ToolJsonFamilies, VllmTemplatesGetTheirFamilies) {
  const char* dir = std::getenv("DIFFTX_TOOL_TEMPLATES");
  if (!dir) GTEST_SKIP() << "DIFFTX_TOOL_TEMPLATES is not set";
  const std::map<std::string, std::optional<ToolFormat>> want = {
      {"tool_chat_template_internlm2_tool.jinja", ToolFormat::internlm},
      {"tool_chat_template_hunyuan_a13b.jinja", ToolFormat::hunyuan_a13b},
      {"tool_chat_template_minimax_m1.jinja", ToolFormat::minimax},
      {"tool_chat_template_xlam_llama.jinja", ToolFormat::xlam},
      {"tool_chat_template_xlam_qwen.jinja", ToolFormat::xlam},
      {"tool_chat_template_granite_20b_fc.jinja", ToolFormat::granite_20b_fc},
      {"tool_chat_template_nemotron_json.jinja", ToolFormat::nemotron_json},
      {"tool_chat_template_nemotron_nano_v2.jinja", ToolFormat::nemotron_json},
      {"tool_chat_template_olmo3.jinja", std::nullopt},
      {"tool_chat_template_hyperclovax_seed_think_14b.jinja", std::nullopt},
      {"tool_chat_template_muse_glimmer.jinja", std::nullopt},
      {"tool_chat_template_minicpm3.jinja", std::nullopt},
      {"tool_chat_template_translategemma.jinja", std::nullopt},
      {"tool_chat_template_deepseekv32.jinja", ToolFormat::deepseek_v31}};
  int seen = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const auto it = want.find(entry.path().filename().string());
    if (it == want.end()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream source;
    source << in.rdbuf();
    EXPECT_EQ(tool_format_of_template(source.str()), it->second) << entry.path();
    ++seen;
  }
  EXPECT_GT(seen, 0) << "none of the templates in " << dir;
}

TEST(ToolJsonFamilies, ParsesInternLmBlocks) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::internlm, text, final);
  };
  const std::string open = "<|action_start|><|plugin|>\n", close = "<|action_end|>";
  ToolParse p = parse("Let me check." + open + R"({"name": "get_weather", "parameters": {"city": "Paris"}})" + close +
                      open + kAdd + close);
  EXPECT_EQ(p.content, "Let me check.");
  EXPECT_EQ(calls_of(p), kBoth);  // "parameters" as InternLM writes them, or "arguments" as vLLM's template does
  EXPECT_EQ(calls_of(parse(open + R"({"name": "now"})" + close)), (Calls{{"now", "{}"}}));
  // Not calls: the code interpreter's actions, malformed JSON, no name.
  for (const std::string& text : {"<|action_start|><|interpreter|>\nprint(1)" + close, open + "{oops}" + close,
                                  open + R"({"arguments": {}})" + close, open + "get_weather(city='Paris')" + close}) {
    p = parse(text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // Streaming: a marker begun waits; a call is open once named, its arguments as written.
  p = parse("Hi <|action_start|>", false);
  EXPECT_EQ(p.content, "Hi ");
  EXPECT_TRUE(p.pending);
  p = parse(open + R"({"name": "add", "parameters": {"a": 1, )", false);
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,)"}}));
  EXPECT_TRUE(p.open);
  EXPECT_EQ(parse("<|action_start|>x", false).content, "<|action_start|>x");
}

TEST(ToolJsonFamilies, ParsesHunyuanAndNemotronLists) {
  ToolParse p = parse_tool_calls(ToolFormat::hunyuan_a13b, "<tool_calls>[" + kWeather + ", " + kAdd + "]</tool_calls>",
                                 true);
  EXPECT_EQ(p.content, "");
  EXPECT_EQ(calls_of(p), kBoth);
  p = parse_tool_calls(ToolFormat::hunyuan_a13b, "Sure.\n<tool_calls> [\n" + kAdd + "\n] </tool_calls>\nAnything else?",
                       true);
  EXPECT_EQ(p.content, "Sure.\nAnything else?");  // text after the list is content, as the other lists'
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  // Not a list (vLLM reads only lists): content.
  const std::string object = "<tool_calls>" + kAdd + "</tool_calls>";
  EXPECT_TRUE(parse_tool_calls(ToolFormat::hunyuan_a13b, object, true).calls.empty());
  EXPECT_EQ(parse_tool_calls(ToolFormat::hunyuan_a13b, object, true).content, object);
  p = parse_tool_calls(ToolFormat::hunyuan_a13b, "<tool_calls>[" + kAdd + "]</tool_", false);
  EXPECT_TRUE(p.pending);  // the closing marker begun
  // A reply in words begins with "Assistant:", as its template asks; vLLM leaves that out.
  EXPECT_EQ(parse_tool_calls(ToolFormat::hunyuan_a13b, "助手：天气晴朗。", true).content, "天气晴朗。");
  p = parse_tool_calls(ToolFormat::hunyuan_a13b, "助手：<tool_calls>[" + kAdd + "]</tool_calls>", true);
  EXPECT_EQ(p.content, "");
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  EXPECT_EQ(parse_tool_calls(ToolFormat::hunyuan_a13b, "Hi 助手：", true).content, "Hi 助手：");  // only first
  p = parse_tool_calls(ToolFormat::hunyuan_a13b, "助手", false);
  EXPECT_TRUE(p.pending);
  EXPECT_EQ(p.content, "");
  EXPECT_EQ(parse_tool_calls(ToolFormat::hunyuan_a13b, "助手", true).content, "助手");

  p = parse_tool_calls(ToolFormat::nemotron_json,
                       "I'll check.\n\n<TOOLCALL>[" + kWeather + ", " + kAdd + "]</TOOLCALL>", true);
  EXPECT_EQ(p.content, "I'll check.\n\n");
  EXPECT_EQ(calls_of(p), kBoth);
  // Without the brackets, as vLLM reads them too; arguments in a string, as its template shows them.
  p = parse_tool_calls(ToolFormat::nemotron_json, "<TOOLCALL>" + kWeather + ", " + kAdd + "</TOOLCALL>", true);
  EXPECT_EQ(calls_of(p), kBoth);
  p = parse_tool_calls(ToolFormat::nemotron_json,
                       R"(<TOOLCALL>{"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}</TOOLCALL>)", true);
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  for (const std::string& text : {std::string("<TOOLCALL>oops</TOOLCALL>"), "<TOOLCALL>[" + kAdd + ", 1]</TOOLCALL>"}) {
    p = parse_tool_calls(ToolFormat::nemotron_json, text, true);
    EXPECT_EQ(p.content, p.calls.empty() ? text : "1]</TOOLCALL>") << text;  // the calls before stay
  }
  EXPECT_EQ(parse_tool_calls(ToolFormat::nemotron_json, "Hi <TOOLC", false).content, "Hi ");
}

TEST(ToolJsonFamilies, ParsesMiniMaxLines) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::minimax, text, final);
  };
  ToolParse p = parse("Checking.\n<tool_calls>\n" + kWeather + "\n" + kAdd + "\n</tool_calls>");
  EXPECT_EQ(p.content, "Checking.\n");
  EXPECT_EQ(calls_of(p), kBoth);
  // Any white space between the calls; the closing marker left out at the end of the turn.
  EXPECT_EQ(calls_of(parse("<tool_calls>" + kWeather + " " + kAdd)), kBoth);
  p = parse("<tool_calls>\n" + kAdd + "\n</tool_calls> Done.");
  EXPECT_EQ(p.content, "Done.");
  // A malformed second line: the first call stays, the rest is content.
  p = parse("<tool_calls>\n" + kAdd + "\n{\"name\": \"now\", oops}\n</tool_calls>");
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  EXPECT_EQ(p.content, "{\"name\": \"now\", oops}\n</tool_calls>");
  p = parse("<tool_calls>\n" + kAdd + "\n</tool_c", false);
  EXPECT_TRUE(p.pending);
  EXPECT_EQ(p.content, "");
}

TEST(ToolJsonFamilies, ParsesXlamListsWhereverVllmFindsThem) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::xlam, text, final);
  };
  const std::string list = "[" + kWeather + ", " + kAdd + "]";
  ToolParse p;
  for (const std::string& text :
       {list, "```json\n" + list + "\n```", "```\n" + list + "```", "``` " + list + "\n```", "```" + list + "```",
        "[TOOL_CALLS] " + list, "<tool_call>" + list + "</tool_call>"}) {
    p = parse(text);
    EXPECT_EQ(p.content, "") << text;
    EXPECT_EQ(calls_of(p), kBoth) << text;
  }
  p = parse("\n " + list);  // after white space too
  EXPECT_EQ(calls_of(p), kBoth);
  EXPECT_EQ(p.content, "\n ");
  p = parse("Calling:\n```json\n[" + kAdd + "]\n```\nDone.");
  EXPECT_EQ(p.content, "Calling:\nDone.");
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  // Not calls: content.
  for (const std::string& text : {std::string("[Note] text"), std::string("```python\nx = [1]\n```"),
                                  "```json\n" + kAdd + "\n```", std::string("See [1] and [TOOL_CALLS]."),
                                  "The list: " + list.substr(0, 20), std::string("[]")}) {
    p = parse(text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // Streaming: undecided while the text may still open calls.
  for (const char* text : {"", "\n", "[", "[TOOL", "Look: ``", "Look: ```", "Look: ```\n", "Look: <tool_"}) {
    p = parse(text, false);
    EXPECT_TRUE(p.pending) << text;
    EXPECT_EQ(p.content, std::string(text).starts_with("Look") ? "Look: " : "") << text;
  }
  EXPECT_EQ(parse("Look: ```py", false).content, "Look: ```py");
  EXPECT_EQ(parse("[Tx", false).content, "[Tx");
}

TEST(ToolJsonFamilies, ParsesGranite20bFcCalls) {
  const auto parse = [](std::string_view text, bool final = true) {
    return parse_tool_calls(ToolFormat::granite_20b_fc, text, final);
  };
  ToolParse p = parse("<function_call> " + kWeather + "\n        <function_call> " + kAdd);
  EXPECT_EQ(p.content, "");
  EXPECT_EQ(calls_of(p), kBoth);
  p = parse("Checking. <function_call>" + kAdd + " <|endoftext|>");
  EXPECT_EQ(p.content, "Checking. ");  // what follows a call is not content, as vLLM has it
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}}));
  // Its template's "no_function" is a call like any other (a constrained reply names listed ones).
  EXPECT_EQ(calls_of(parse(R"(<function_call> {"name": "no_function", "arguments": {}})")),
            (Calls{{"no_function", "{}"}}));
  for (const std::string& text : {std::string("<function_call> oops"), "<function_call> [" + kAdd + "]"}) {
    p = parse(text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  p = parse("<function_call> " + kAdd + " <function_call> {\"name\": \"now\", \"argu", false);
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1,"b":2})"}, {"now", ""}}));
  EXPECT_TRUE(p.open);
}

// Whether the grammar of at most two calls (`auto`: text, or text then calls) takes each text.
void expect_grammar(ToolFormat format, bool automatic, const std::vector<std::string>& takes,
                    const std::vector<std::string>& refuses) {
  grammar::GrammarBuilder b;
  grammar::JsonGrammar j(b);
  const int32_t calls = tool_calls_rule(j, format, weather_and_add(), 2);
  const auto g = b.build(automatic ? tool_choice_auto_rule(j, format, calls) : calls);
  for (const std::string& text : takes) {
    grammar::Automaton a(g);
    EXPECT_TRUE(testing::accepts(a, text)) << tool_format_name(format) << ": " << text;
  }
  for (const std::string& text : refuses) {
    grammar::Automaton a(g);
    EXPECT_FALSE(testing::accepts(a, text)) << tool_format_name(format) << ": " << text;
  }
}

TEST(ToolJsonFamilies, CallGrammarsWriteEachTemplatesForm) {
  const std::string weather = R"({"name": "get_weather", "arguments": {"city": "Paris"}})";
  const std::string bad_args = R"({"name": "add", "arguments": {"a": 1}})";
  const std::string other = R"({"name": "sub", "arguments": {}})";
  const std::string open = "<|action_start|><|plugin|>\n", close = "<|action_end|>";
  expect_grammar(ToolFormat::internlm, false,
                 {open + kAdd + close, open + R"({"name": "add", "parameters": {"a": 1, "b": 2}})" + close,
                  open + weather + close + open + kAdd + close, open + weather + close + "\n" + open + kAdd + close},
                 {open + bad_args + close, open + other + close, "<|action_start|><|plugin|>" + kAdd + close,
                  open + kAdd + close + open + kAdd + close + open + kAdd + close});
  expect_grammar(ToolFormat::internlm, true, {"It is sunny.", "Let me see." + open + kAdd + close},
                 {"Text <|action_start|> more."});
  expect_grammar(ToolFormat::hunyuan_a13b, false,
                 {"<tool_calls>[" + kAdd + "]</tool_calls>",
                  "<tool_calls>[" + weather + ", " + kAdd + "]</tool_calls>"},
                 {"<tool_calls>[" + kAdd + "]", "<tool_calls>" + kAdd + "</tool_calls>",
                  "<tool_calls>[" + bad_args + "]</tool_calls>"});
  expect_grammar(ToolFormat::minimax, false,
                 {"<tool_calls>\n" + kAdd + "\n</tool_calls>",
                  "<tool_calls>\n" + weather + "\n" + kAdd + "\n</tool_calls>"},
                 {"<tool_calls>\n" + weather + " " + kAdd + "\n</tool_calls>", "<tool_calls>" + kAdd + "</tool_calls>",
                  "<tool_calls>\n" + other + "\n</tool_calls>"});
  expect_grammar(ToolFormat::granite_20b_fc, false,
                 {"<function_call> " + kAdd, "<function_call> " + weather + "\n<function_call> " + kAdd},
                 {"<function_call>" + kAdd, "<function_call> " + bad_args, "<function_call> [" + kAdd + "]"});
  expect_grammar(ToolFormat::granite_20b_fc, true, {"No tool fits.", "Sure. <function_call> " + kAdd},
                 {"Sure. <function_call> " + other});
  expect_grammar(ToolFormat::nemotron_json, false,
                 {"<TOOLCALL>[" + kAdd + "]</TOOLCALL>", "<TOOLCALL>[" + weather + ", " + kAdd + "]</TOOLCALL>"},
                 {"<TOOLCALL>" + kAdd + "</TOOLCALL>", "<TOOLCALL>[" + other + "]</TOOLCALL>"});
  expect_grammar(ToolFormat::xlam, false, {"[" + kAdd + "]", "[" + weather + ", " + kAdd + "]"},
                 {"```json\n[" + kAdd + "]\n```", "[" + bad_args + "]", kAdd, " [" + kAdd + "]"});
  // xLAM's text never reads as calls: no "[" first (after white space), no marker anywhere that
  // vLLM reads a list after. Code fences in other languages are text.
  expect_grammar(ToolFormat::xlam, true,
                 {"", "It is sunny.", "  Sunny.", "Code:\n```python\nx = [1]\n```\n", "See <b>this</b> [1].",
                  "[" + kAdd + "]"},
                 {"[Note] text", " \n[" + kAdd + "]", "Sure: ```json\n[" + kAdd + "]\n```", "Sure: ```\n[1]",
                  "Sure: ```[1]", "Say [TOOL_CALLS] twice", "<tool_call>[]</tool_call>"});
}

}  // namespace
}  // namespace difftx::serve
