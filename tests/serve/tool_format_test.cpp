// Reading replies back (serve/tool_format.h, serve/reasoning.h, serve/reply_reader.h): each
// family's calls parsed into names and compact arguments, text held back while a marker may be
// starting, unfinished or malformed calls kept as content; reasoning blocks opened by the prompt
// or by the reply; a streamed reply's parts, pushed a byte at a time, add up to the whole. And the
// grammar of each family's calls accepts what its models write and nothing that calls an unlisted
// function or passes arguments its parameters refuse.
#include <gtest/gtest.h>

#include <sstream>

#include "data/data_fixtures.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "grammar/automaton.h"
#include "io/input_file.h"
#include "io/io_test_files.h"
#include "serve/json_call.h"
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

using nlohmann::ordered_json;

TEST(ToolFormat, RecognisedFromTheTemplateOrByName) {
  EXPECT_EQ(tool_format_of_template("... <tool_call>\\n{{ tool_call | tojson }}</tool_call>"), ToolFormat::hermes);
  EXPECT_EQ(tool_format_of_template("{{- '[TOOL_CALLS][' }}"), ToolFormat::mistral);
  EXPECT_EQ(tool_format_of_template("{{- '<|python_tag|>' }}"), ToolFormat::llama3_json);
  EXPECT_EQ(tool_format_of_template("Environment: ipython ... {\"name\": function name, \"parameters\": ...}"),
            ToolFormat::llama3_json);
  EXPECT_FALSE(tool_format_of_template("<|im_start|>{{ message.content }}").has_value());
  EXPECT_EQ(tool_format_named("mistral"), ToolFormat::mistral);
  EXPECT_FALSE(tool_format_named("json").has_value());
}

TEST(ToolFormat, ParsesEachFamilysCalls) {
  const ToolParse h = parse_tool_calls(
      ToolFormat::hermes,
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"b\": 2, \"a\": 1}}\n</tool_call>",
      true);
  EXPECT_EQ(h.content, "Let me check.\n");
  ASSERT_EQ(h.calls.size(), 2u);
  EXPECT_EQ(h.calls[0].name, "get_weather");
  EXPECT_EQ(h.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(h.calls[1].arguments, R"({"b":2,"a":1})");  // the model's own text, keys in its order

  const ToolParse l = parse_tool_calls(
      ToolFormat::llama3_json,
      "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}; {\"name\": \"get_weather\", "
      "\"parameters\": {\"city\": \"Rome\"}}",
      true);
  EXPECT_EQ(l.content, "");
  ASSERT_EQ(l.calls.size(), 2u);
  EXPECT_EQ(l.calls[0].name, "add");
  EXPECT_EQ(l.calls[1].arguments, R"({"city":"Rome"})");
  EXPECT_EQ(parse_tool_calls(ToolFormat::llama3_json, "{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 3}\"}", true)
                .calls.at(0)
                .arguments,
            R"({"a":3})");  // arguments written as a JSON string
  EXPECT_TRUE(parse_tool_calls(ToolFormat::llama3_json, "The answer is {x}.", true).calls.empty());
  EXPECT_EQ(parse_tool_calls(ToolFormat::llama3_json, "The answer is {x}.", true).content, "The answer is {x}.");
  // A JSON answer that names something is no call: a call holds name, its arguments, type and id only.
  const ToolParse answer = parse_tool_calls(ToolFormat::llama3_json, R"({"name": "Alice", "age": 30})", true);
  EXPECT_TRUE(answer.calls.empty());
  EXPECT_EQ(answer.content, R"({"name": "Alice", "age": 30})");
  EXPECT_EQ(parse_tool_calls(ToolFormat::llama3_json, R"({"type": "function", "name": "now", "parameters": {}})", true)
                .calls.size(),
            1u);

  const ToolParse m = parse_tool_calls(
      ToolFormat::mistral, "[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}, \"id\": \"abcDEF123\"}]",
      true);
  EXPECT_EQ(m.content, "");
  ASSERT_EQ(m.calls.size(), 1u);
  EXPECT_EQ(m.calls[0].arguments, R"({"a":1,"b":2})");
}

TEST(ToolFormat, HoldsBackMarkersAndKeepsWhatIsNotACall) {
  // While streaming: a tail that may begin a marker waits; a begun call is pending.
  EXPECT_EQ(parse_tool_calls(ToolFormat::hermes, "Sure <tool_", false).content, "Sure ");
  EXPECT_TRUE(parse_tool_calls(ToolFormat::hermes, "Sure <tool_", false).pending);
  EXPECT_EQ(parse_tool_calls(ToolFormat::hermes, "Sure <tool_", true).content, "Sure <tool_");
  EXPECT_TRUE(parse_tool_calls(ToolFormat::hermes, "<tool_call>\n{\"name\": \"ad", false).pending);
  EXPECT_TRUE(parse_tool_calls(ToolFormat::hermes, "<tool_call>\n{\"name\": \"ad", false).calls.empty());
  // A call is open once named, its arguments those written so far, less white space.
  ToolParse open = parse_tool_calls(ToolFormat::hermes, "<tool_call>\n{\"name\": \"add\", \"argu", false);
  EXPECT_TRUE(open.pending && open.open);
  EXPECT_EQ(calls_of(open), (Calls{{"add", ""}}));
  EXPECT_EQ(open.content, "");
  open = parse_tool_calls(ToolFormat::hermes, "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": \"x y\\", false);
  EXPECT_EQ(calls_of(open), (Calls{{"add", R"({"a":"x y\)"}}));
  EXPECT_TRUE(open.open);
  open = parse_tool_calls(ToolFormat::hermes, "<tool_call>{\"name\": \"add\", \"arguments\": {\"w\": \"\xC3", false);
  EXPECT_EQ(calls_of(open), (Calls{{"add", R"({"w":")"}}));  // not half a character
  open = parse_tool_calls(ToolFormat::hermes, "<tool_call>{\"name\": \"add\", \"arguments\": \"{\\\"a", false);
  EXPECT_EQ(calls_of(open), (Calls{{"add", ""}}));  // arguments in a string: sent once read
  // At the end (max_tokens), a named call stays a call cut short, as a stream sent it; a call cut
  // before its name, or malformed, is content: nothing the model wrote is lost.
  const ToolParse cut_call = parse_tool_calls(ToolFormat::hermes, "<tool_call>\n{\"name\": \"add\", \"argu", true);
  EXPECT_EQ(calls_of(cut_call), (Calls{{"add", ""}}));
  EXPECT_FALSE(cut_call.open || cut_call.pending);
  EXPECT_EQ(parse_tool_calls(ToolFormat::hermes, "<tool_call>\n{\"name\": \"ad", true).content,
            "<tool_call>\n{\"name\": \"ad");
  EXPECT_EQ(parse_tool_calls(ToolFormat::hermes, "<tool_call>{oops}</tool_call>", true).content,
            "<tool_call>{oops}</tool_call>");
  EXPECT_TRUE(parse_tool_calls(ToolFormat::llama3_json, "<|pyth", false).pending);
  EXPECT_TRUE(parse_tool_calls(ToolFormat::llama3_json, "", false).pending);
  // A turn cut inside its second call (max_tokens): the first call stays, as a stream has sent
  // it; the rest is content. Cut inside its first call, all of it is content.
  const std::string cut = "[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {}}, {\"na";
  EXPECT_EQ(parse_tool_calls(ToolFormat::mistral, cut, true).calls.size(), 1u);
  EXPECT_EQ(parse_tool_calls(ToolFormat::mistral, cut, true).content, "{\"na");
  EXPECT_TRUE(parse_tool_calls(ToolFormat::mistral, "[TOOL_CALLS][{\"na", true).calls.empty());
  EXPECT_EQ(parse_tool_calls(ToolFormat::mistral, "[TOOL_CALLS][{\"na", true).content, "[TOOL_CALLS][{\"na");
  const ToolParse l = parse_tool_calls(ToolFormat::llama3_json, "{\"name\": \"add\", \"parameters\": {}}; {\"na", true);
  EXPECT_EQ(l.calls.size(), 1u);
  EXPECT_EQ(l.content, "{\"na");
}

// A JSON call's arguments are the model's text less the white space between tokens, so the
// arguments of a call still being written are a prefix of the finished call's.
TEST(ToolFormat, ArgumentsAreTheModelsJsonLessItsWhiteSpace) {
  EXPECT_EQ(json_without_space("{ \"a\" : \"x  y\",\n\t\"b\": [1, 2.50e1] }"), R"({"a":"x  y","b":[1,2.50e1]})");
  EXPECT_EQ(json_without_space(R"({"q": "say \" hi \\", "r": 1})"), R"({"q":"say \" hi \\","r":1})");
  EXPECT_EQ(json_without_space("{\"w\": \"caf\xC3"), "{\"w\":\"caf");  // half of \"é\" waits
  EXPECT_EQ(json_without_space("{\"w\": \"\xE2\x82"), "{\"w\":\"");
  EXPECT_EQ(json_without_space("{\"w\": \"\xE2\x82\xAC"), "{\"w\":\"\xE2\x82\xAC");
  const std::string whole = R"({"s": "a}]\"", "n": [1, {"m": null}], "t": true})";
  for (size_t cut = 0; cut <= whole.size(); ++cut) {
    size_t i = 0;
    const Scan s = skip_json_value(std::string_view(whole).substr(0, cut), i);
    EXPECT_EQ(s, cut == whole.size() ? Scan::done : Scan::more) << cut;
    EXPECT_EQ(json_without_space(whole).substr(0, json_without_space(whole.substr(0, cut)).size()),
              json_without_space(whole.substr(0, cut)));
  }
  size_t i = 0;
  EXPECT_EQ(skip_json_value("12", i), Scan::more);  // 12 may go on: 123
  EXPECT_EQ(skip_json_value("12,", i = 0), Scan::done);
  EXPECT_EQ(i, 2u);
  EXPECT_EQ(skip_json_value("}", i = 0), Scan::bad);
  // Pythonic calls: the arguments grow a keyword at a time.
  const ToolParse p = parse_tool_calls(ToolFormat::pythonic, "[add(a=1, b='x", false);
  EXPECT_TRUE(p.open);
  EXPECT_EQ(calls_of(p), (Calls{{"add", R"({"a":1)"}}));
  EXPECT_EQ(calls_of(parse_tool_calls(ToolFormat::pythonic, "[add(a=1, b='x')", false)),
            (Calls{{"add", R"({"a":1,"b":"x"})"}}));
}

TEST(Reasoning, SplitsTheBlockFromTheAnswer) {
  const ReasoningMarkers m;
  ReasoningSplit s = split_reasoning("\n<think>\nTwo is even.\n</think>\n\nTwo.", m, false, true);
  EXPECT_TRUE(s.had_block);
  EXPECT_EQ(s.reasoning, "\nTwo is even.\n");
  EXPECT_EQ(s.content, "\n\nTwo.");
  s = split_reasoning("Two is even.</think>Two.", m, true, true);  // the prompt opened it
  EXPECT_EQ(s.reasoning, "Two is even.");
  EXPECT_EQ(s.content, "Two.");
  s = split_reasoning("Just an answer <think>x</think>", m, false, true);
  EXPECT_FALSE(s.had_block);
  EXPECT_EQ(s.content, "Just an answer <think>x</think>");
  s = split_reasoning("<think>never closed", m, false, true);
  EXPECT_EQ(s.reasoning, "never closed");
  EXPECT_EQ(s.content, "");
  s = split_reasoning("<thi", m, false, false);  // may still open a block
  EXPECT_EQ(s.held, 4u);
  s = split_reasoning("<think>so far</thi", m, false, false);
  EXPECT_EQ(s.reasoning, "so far");
  EXPECT_EQ(s.held, 5u);
  // White space may precede the open marker, up to 16 bytes: a reply of more is content at once,
  // whole or streamed, not held until it ends.
  s = split_reasoning(std::string(16, '\n'), m, false, false);
  EXPECT_EQ(s.held, 16u);
  s = split_reasoning(std::string(16, ' ') + "<think>x</think>y", m, false, true);
  EXPECT_EQ(s.reasoning, "x");
  for (const bool final : {false, true}) {
    s = split_reasoning(std::string(17, '\n') + "<think>x</think>", m, false, final);
    EXPECT_FALSE(s.had_block);
    EXPECT_EQ(s.held, 0u);
    EXPECT_EQ(s.content, std::string(17, '\n') + "<think>x</think>");
  }
  EXPECT_TRUE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n", "", m));
  EXPECT_FALSE(prompt_opens_reasoning("<think>a</think><|im_start|>assistant\n", "", m));
  // Only the generation prompt opens a block: not a <think> a message holds.
  const std::string conversation = "<|im_start|>user\nWhat does <think> do?<|im_end|>\n";
  EXPECT_FALSE(prompt_opens_reasoning(conversation + "<|im_start|>assistant\n", conversation, m));
  EXPECT_TRUE(prompt_opens_reasoning(conversation + "<|im_start|>assistant\n<think>\n", conversation, m));
  EXPECT_TRUE(reasoning_markers_of_template("{{ '<think>' }}").has_value());
  EXPECT_FALSE(reasoning_markers_of_template("{{ messages }}").has_value());
}

// A model whose template says nothing of thinking but whose vocabulary has <think> and </think>
// as added tokens (Phi-4-mini-reasoning's) thinks in them; one with either alone does not.
TEST(Reasoning, MarkersFromTheVocabularysAddedTokens) {
  DIFFTX_REQUIRE_DATA("hf/llama3/tokenizer.json");
  const auto with = [](const std::vector<std::pair<int, std::string>>& renamed) {
    nlohmann::json j = nlohmann::json::parse(io::read_whole_file(data::data_root() / "hf/llama3/tokenizer.json"));
    for (nlohmann::json& t : j["added_tokens"])
      for (const auto& [id, content] : renamed)
        if (t["id"] == id) t["content"] = content;
    testing::TempDir dir;
    testing::write_bytes(dir / "tokenizer.json", j.dump());
    return reasoning_markers_of_vocabulary(data::load_tokenizer(dir.path().string()));
  };
  const std::optional<ReasoningMarkers> both = with({{128250, "<think>"}, {128251, "</think>"}});
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->open, "<think>");
  EXPECT_FALSE(with({{128250, "<think>"}}).has_value());
  EXPECT_FALSE(with({}).has_value());
}

// Magistral's [THINK] and Seed-OSS's <seed:think>, from their templates or by name, split as <think> does.
TEST(Reasoning, OtherFormatsFromTheirTemplatesOrNames) {
  const std::optional<ReasoningMarkers> mistral = reasoning_markers_of_template(
      "Your thinking process must follow the template below:[THINK]Your thoughts[/THINK]Here, provide a response.");
  ASSERT_TRUE(mistral.has_value());
  EXPECT_EQ(mistral->open, "[THINK]");
  EXPECT_EQ(mistral->close, "[/THINK]");
  const std::optional<ReasoningMarkers> seed =
      reasoning_markers_of_template("{{ '<seed:think>' + message.reasoning_content + '</seed:think>' }}");
  ASSERT_TRUE(seed.has_value());
  EXPECT_EQ(seed->open, "<seed:think>");
  EXPECT_EQ(reasoning_markers_of_template("{%- if '</seed:think>' in content %}")->close, "</seed:think>");
  EXPECT_EQ(reasoning_markers_named("mistral")->close, "[/THINK]");
  EXPECT_EQ(reasoning_markers_named("seed_oss")->open, "<seed:think>");
  for (const char* think : {"think", "deepseek_r1", "qwen3", "glm45"}) EXPECT_EQ(reasoning_markers_named(think)->open, "<think>");
  EXPECT_FALSE(reasoning_markers_named("auto").has_value());
  EXPECT_FALSE(reasoning_markers_named("none").has_value());
  EXPECT_EQ(reasoning_format_names("|"), "think|mistral|seed_oss");

  ReasoningSplit s = split_reasoning("[THINK]2 + 2 is 4.[/THINK]It is 4.", *mistral, false, true);
  EXPECT_EQ(s.reasoning, "2 + 2 is 4.");
  EXPECT_EQ(s.content, "It is 4.");
  s = split_reasoning("[THI", *mistral, false, false);
  EXPECT_EQ(s.held, 4u);
  s = split_reasoning("weighing it</seed:think>\nYes.", *seed, true, true);
  EXPECT_EQ(s.reasoning, "weighing it");
  EXPECT_EQ(s.content, "\nYes.");
}

// skip_special_tokens: a reply's text leaves out every special added token but the markers its
// tool parser and reasoning block read; added tokens that are not special are text.
TEST(ReplyReader, LeavesOutTheSpecialTokensNoParserReads) {
  data::TokenTable bytes;
  for (int b = 0; b < 256; ++b) bytes.insert(std::string(1, static_cast<char>(b)), b);
  const data::Tokenizer base("specials", std::move(bytes), data::gpt2_pattern(),
                             {{"<|endoftext|>", 256}, {"[TOOL_CALLS]", 257}, {"[ARGS]", 258}, {"[CALL_ID]", 259},
                              {"<think>", 260}, {"</think>", 261}, {"<|im_start|>", 262}, {"<tool_call>", 263},
                              {"<|python_tag|>", 264}});
  data::TokenizerParts parts = base.parts();
  parts.added.push_back({"</tool_call>", 265, false});  // as Qwen's tokenizer.json has it: text
  const data::Tokenizer tokenizer(parts);
  using Ids = std::vector<int32_t>;
  EXPECT_EQ(unread_special_tokens(tokenizer, {}), (Ids{256, 257, 258, 259, 260, 261, 262, 263, 264}));
  EXPECT_EQ(unread_special_tokens(tokenizer, {std::nullopt, false, ToolFormat::mistral_v11, {}}),
            (Ids{256, 260, 261, 262, 263, 264}));
  EXPECT_EQ(unread_special_tokens(tokenizer, {std::nullopt, false, ToolFormat::mistral, {}}),
            (Ids{256, 260, 261, 262, 263, 264}));  // it reads the newer form too
  EXPECT_EQ(unread_special_tokens(tokenizer, {ReasoningMarkers{}, true, ToolFormat::hermes, {}}),
            (Ids{256, 257, 258, 259, 262, 264}));
  EXPECT_EQ(unread_special_tokens(tokenizer, {std::nullopt, false, ToolFormat::llama3_json, {}}),
            (Ids{256, 257, 258, 259, 260, 261, 262, 263}));
  EXPECT_EQ(unread_special_tokens(tokenizer, {std::nullopt, false, ToolFormat::xlam, {}}),
            (Ids{256, 258, 259, 260, 261, 262, 264}));  // [TOOL_CALLS] and <tool_call> open its lists too
  // Every family keeps the markers its calls are written with (xLAM's bare list has none).
  std::stringstream names(tool_format_names("\n"));
  for (std::string name; std::getline(names, name);) {
    const ToolFormat format = *tool_format_named(name);
    const std::vector<std::string> read = tool_parser_markers(format);
    for (const std::string& marker : tool_call_markers(format))
      EXPECT_NE(std::find(read.begin(), read.end(), marker), read.end()) << name << " " << marker;
  }
  EXPECT_EQ(tool_parser_markers(ToolFormat::pythonic), (std::vector<std::string>{"<|python_start|>", "<|python_end|>"}));
  EXPECT_EQ(tool_parser_markers(ToolFormat::mistral_v11),
            (std::vector<std::string>{"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}));
}

// --tool-parser mistral writes the form the tokenizer was trained on: [ARGS] marks v11 and later.
TEST(ToolFormat, MistralsFormFromTheTokenizer) {
  const auto tokenizer_with = [](std::map<std::string, int32_t> specials) {
    data::TokenTable bytes;
    for (int b = 0; b < 256; ++b) bytes.insert(std::string(1, static_cast<char>(b)), b);
    specials.emplace("<|endoftext|>", 256);
    return data::Tokenizer("t", std::move(bytes), data::gpt2_pattern(), specials);
  };
  const data::Tokenizer v11 = tokenizer_with({{"[TOOL_CALLS]", 257}, {"[ARGS]", 258}});
  const data::Tokenizer v7 = tokenizer_with({{"[TOOL_CALLS]", 257}});
  EXPECT_EQ(tool_format_for_tokenizer(ToolFormat::mistral, v11), ToolFormat::mistral_v11);
  EXPECT_EQ(tool_format_for_tokenizer(ToolFormat::mistral, v7), ToolFormat::mistral);
  EXPECT_EQ(tool_format_for_tokenizer(ToolFormat::mistral_v11, v7), ToolFormat::mistral_v11);
  EXPECT_EQ(tool_format_for_tokenizer(ToolFormat::hermes, v11), ToolFormat::hermes);
  EXPECT_EQ(tool_format_named("mistral_v11"), ToolFormat::mistral_v11);
  EXPECT_EQ(tool_calls_marker(ToolFormat::mistral_v11), "[TOOL_CALLS]");
}

TEST(ReplyReader, StreamedPartsAddUpToTheWhole) {
  const std::string reply =
      "<think>Which tool?</think>I will call it.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, "
      "\"b\": 2}}\n</tool_call>";
  const ReplyFormat format{ReasoningMarkers{}, false, ToolFormat::hermes, {}};
  const ReplyParts whole = read_reply(format, reply);
  EXPECT_EQ(whole.reasoning, "Which tool?");
  EXPECT_EQ(whole.content, "I will call it.\n");
  ASSERT_EQ(whole.calls.size(), 1u);
  ReplyStream stream(format);
  std::string content;
  for (size_t i = 0; i < reply.size(); ++i) {
    content += stream.push(reply.substr(i, 1), false).content;
    EXPECT_EQ(content.find('<'), std::string::npos) << "a marker's first bytes went out as content";
  }
  std::vector<size_t> bytes;
  for (size_t i = 1; i < reply.size(); ++i) bytes.push_back(i);
  const ReplyParts sum = testing::streamed_reply(format, reply, bytes);
  EXPECT_EQ(sum.reasoning, whole.reasoning);
  EXPECT_EQ(sum.content, whole.content);
  ASSERT_EQ(sum.calls.size(), 1u);
  EXPECT_EQ(sum.calls[0].name, "add");
  EXPECT_EQ(sum.calls[0].arguments, whole.calls[0].arguments);
}

// A stream reads a reasoning block from its first unsent byte on (a push costs its delta): the
// parts still add up to the whole reading, cut after every byte and in uneven pieces, for replies
// with and without a block, a block left open by the prompt, one never closed, close markers'
// first bytes inside the reasoning, white space before the block, and with and without tools.
TEST(ReplyReader, StreamedReasoningAddsUpToTheWholeAtEveryCut) {
  const std::string replies[] = {
      "<think>a</think>b",
      "  \n<think>x </thi y </think</think>done </think> after",
      "<think>never closed </thin",
      "no block at all <think>inside</think>",
      "<thi",
      "<think></think>",
      "<think>",
      "",
      "<think>why</think><tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>",
      "                    twenty spaces first",
      "\n<think>\nagain</think>b",
  };
  for (const bool tools : {false, true})
    for (const bool open : {false, true})
      for (const std::string& reply : replies) {
        ReplyFormat format{ReasoningMarkers{}, open, std::nullopt, {}};
        if (tools) format.tools = ToolFormat::hermes;
        const ReplyParts whole = read_reply(format, reply);
        const std::string what = reply + (open ? " (open)" : "") + (tools ? " (tools)" : "");
        std::vector<size_t> every, uneven;
        for (size_t i = 1; i < reply.size(); ++i) every.push_back(i);
        for (size_t i = 1; i < reply.size(); i += 1 + i % 4) uneven.push_back(i);
        // Empty pushes too (a token held back as a stop string's start, or half a character).
        const std::vector<size_t> empty_first{0, 0, std::min<size_t>(1, reply.size())};
        for (const auto& cuts : {every, uneven, std::vector<size_t>{}, empty_first}) {
          const ReplyParts sum = testing::streamed_reply(format, reply, cuts);
          EXPECT_EQ(sum.reasoning, whole.reasoning) << what;
          EXPECT_EQ(sum.content, whole.content) << what;
          ASSERT_EQ(sum.calls.size(), whole.calls.size()) << what;
          for (size_t k = 0; k < sum.calls.size(); ++k) EXPECT_EQ(sum.calls[k].arguments, whole.calls[k].arguments);
        }
      }
}

// A block the prompt opened, which the model opens again anyway: the repeated marker is not
// reasoning (vLLM drops it too).
TEST(ReplyReader, ARepeatedOpenMarkerIsDropped) {
  const ReplyFormat open{ReasoningMarkers{}, true, std::nullopt, {}};
  ReplyParts r = read_reply(open, "\n<think>\nweighing</think>Yes.");
  EXPECT_EQ(r.reasoning, "\nweighing");
  EXPECT_EQ(r.content, "Yes.");
  r = read_reply(open, "weighing</think>Yes.");
  EXPECT_EQ(r.reasoning, "weighing");
  r = read_reply(open, "<thinking is hard</think>Yes.");  // not the marker
  EXPECT_EQ(r.reasoning, "<thinking is hard");
}

std::shared_ptr<const grammar::Grammar> calls_grammar(ToolFormat format, int64_t max_calls, bool automatic) {
  grammar::GrammarBuilder b;
  grammar::JsonGrammar j(b);
  const int32_t calls = tool_calls_rule(j, format, weather_and_add(), max_calls);
  return b.build(automatic ? tool_choice_auto_rule(j, format, calls) : calls);
}

TEST(ToolFormat, CallGrammarsTakeWhatModelsWriteAndOnlyValidCalls) {
  const auto hermes = calls_grammar(ToolFormat::hermes, 2, false);
  EXPECT_TRUE(accepts(hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"));
  EXPECT_TRUE(accepts(hermes, "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>\n"
                              "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":3,\"b\":4}}</tool_call>"));
  EXPECT_FALSE(accepts(hermes, "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>"
                               "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>"
                               "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>"));  // > 2
  EXPECT_FALSE(accepts(hermes, "<tool_call>{\"name\":\"sub\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>"));
  EXPECT_FALSE(accepts(hermes, "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1}}</tool_call>"));
  EXPECT_FALSE(accepts(hermes, "Sure.<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>"));

  const auto llama = calls_grammar(ToolFormat::llama3_json, 2, false);
  EXPECT_TRUE(accepts(llama, "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}"));
  EXPECT_TRUE(accepts(llama, "{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}; "
                             "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"x\"}}"));
  EXPECT_FALSE(accepts(llama, "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}"));

  const auto mistral = calls_grammar(ToolFormat::mistral, 2, false);
  EXPECT_TRUE(accepts(mistral, "[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}]"));
  EXPECT_FALSE(accepts(mistral, "[TOOL_CALLS][]"));

  // auto: free text, or free text that opens calls; the marker never in the text itself.
  const auto automatic = calls_grammar(ToolFormat::hermes, 2, true);
  EXPECT_TRUE(accepts(automatic, "It is sunny."));
  EXPECT_TRUE(accepts(automatic, "Let me see.<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>"));
  EXPECT_FALSE(accepts(automatic, "<tool_call>{\"name\":\"nope\"}</tool_call>"));
  const auto llama_auto = calls_grammar(ToolFormat::llama3_json, 2, true);
  EXPECT_TRUE(accepts(llama_auto, "The answer is 3."));
  EXPECT_TRUE(accepts(llama_auto, "<b>bold</b> text"));
  EXPECT_FALSE(accepts(llama_auto, "{\"just\": \"json\"}"));  // a reply that starts with "{" is a call
  EXPECT_FALSE(accepts(llama_auto, "text <|python_tag|> more"));
}

}  // namespace
}  // namespace difftx::serve
