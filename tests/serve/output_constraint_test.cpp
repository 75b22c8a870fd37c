// The constraints a request's output rules make (serve/output_constraint.h), over a tokenizer of
// bytes: vLLM's regex (the whole output one match) and choice; and, with the tool-call markers as
// control tokens, as Kimi's, InternLM's and GLM's tokenizers have them, every marker of a family's
// calls, not only the opening one, may be drawn as its token where the grammar has it, and
// nowhere else.
#include <gtest/gtest.h>

#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"
#include "serve/api_error.h"
#include "serve/output_constraint.h"
#include "serve/reasoning.h"
#include "support/tool_functions.h"

namespace difftx::serve {
namespace {

// The 256 bytes, then the family's markers and <|endoftext|> as special tokens.
data::Tokenizer byte_tokenizer_with(const std::vector<std::string>& markers) {
  data::TokenTable bytes;
  for (int b = 0; b < 256; ++b) bytes.insert(std::string(1, static_cast<char>(b)), b);
  std::map<std::string, int32_t> specials = {{"<|endoftext|>", 256}};
  for (const std::string& m : markers) specials.emplace(m, static_cast<int32_t>(256 + specials.size()));
  return data::Tokenizer("markers", std::move(bytes), data::gpt2_pattern(), specials);
}

bool allows(const uint64_t* mask, int32_t id) { return mask == nullptr || (mask[id >> 6] >> (id & 63) & 1) != 0; }

// A model of byte tokens with the markers as special tokens (and the family's calls), as the
// constraints see it.
struct ByteModel {
  explicit ByteModel(const std::vector<std::string>& markers, std::optional<ToolFormat> format = std::nullopt)
      : tokenizer(byte_tokenizer_with(markers)) {
    model.tokenizer = &tokenizer;
    model.vocabulary = grammar::TokenVocabulary::of(tokenizer, tokenizer.vocab_size());
    model.tool_format = format;
  }
  const data::Tokenizer tokenizer;
  ConstraintModel model;
};

TEST(OutputConstraint, EveryMarkerOfAFamilyMayBeItsControlToken) {
  const std::vector<std::pair<ToolFormat, std::string>> replies = {
      {ToolFormat::kimi_k2,
       R"(<|tool_calls_section_begin|><|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{"a": 1, "b": 2})"
       R"(<|tool_call_end|><|tool_calls_section_end|>)"},
      {ToolFormat::internlm, "<|action_start|><|plugin|>\n{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}<|action_end|>"},
      {ToolFormat::glm45,
       "<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n"
       "</tool_call>"},
      {ToolFormat::deepseek_v31,
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": 1, \"b\": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
      {ToolFormat::hermes, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>"},
      {ToolFormat::minimax, "<tool_calls>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_calls>"},
      {ToolFormat::nemotron_json, R"(<TOOLCALL>[{"name": "add", "arguments": {"a": 1, "b": 2}}]</TOOLCALL>)"},
      {ToolFormat::mistral_v11, R"([TOOL_CALLS]add[ARGS]{"a": 1, "b": 2}[TOOL_CALLS]add[ARGS]{"a": 3, "b": 4})"},
      {ToolFormat::seed_oss,
       "<seed:tool_call>\n<function=add>\n<parameter=a>1</parameter>\n<parameter=b>2</parameter>\n</function>\n"
       "</seed:tool_call>"}};
  for (const auto& [format, reply] : replies) {
    SCOPED_TRACE(tool_format_name(format));
    const std::vector<std::string> markers = tool_call_markers(format);
    ByteModel bytes(markers, format);
    const data::Tokenizer& tokenizer = bytes.tokenizer;
    ConstraintModel& model = bytes.model;
    OutputRequest rules;
    rules.functions = testing::weather_and_add();
    rules.tool_choice = ToolChoice::required;
    ConstraintCache cache;
    const auto source = cache.get(model, rules, false);
    ASSERT_NE(source, nullptr);
    const int32_t end = tokenizer.end_of_text();
    const std::unique_ptr<infer::TokenConstraint> c = source->start(std::vector<int32_t>{end});

    const std::vector<int32_t> ids = tokenizer.encode(reply, data::Specials::allowed);
    for (const std::string& m : markers)  // the reply writes each marker as its token
      EXPECT_NE(std::find(ids.begin(), ids.end(), tokenizer.special_tokens().at(m)), ids.end()) << m;
    // A closing marker's token is refused where the calls have not begun.
    const int32_t last_marker = tokenizer.special_tokens().at(markers.back());
    if (last_marker != ids.front()) {
      EXPECT_FALSE(allows(c->allowed(), last_marker)) << markers.back();
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE(allows(c->allowed(), ids[i])) << "token " << i << " '" << tokenizer.decode({&ids[i], 1}) << "'";
      c->accept(ids[i]);
    }
    EXPECT_TRUE(allows(c->allowed(), end));
  }
}

// Inside a string argument, and in auto mode's free text, a marker's token is never allowed (its
// text may be spelled there, as text): the model cannot end a call in the middle of a string, nor
// write call tokens outside the calls.
TEST(OutputConstraint, MarkerTokensNeverStandInsideTextOrStrings) {
  for (const auto& [format, inside_string] : std::vector<std::pair<ToolFormat, std::string>>{
           {ToolFormat::kimi_k2, "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
                                 "<|tool_call_argument_begin|>{\"city\": \"Par"},
           {ToolFormat::hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par"},
           {ToolFormat::deepseek_v31, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"P"}}) {
    SCOPED_TRACE(tool_format_name(format));
    const std::vector<std::string> markers = tool_call_markers(format);
    ByteModel bytes(markers, format);
    const data::Tokenizer& tokenizer = bytes.tokenizer;
    ConstraintModel& model = bytes.model;
    ConstraintCache cache;
    for (const ToolChoice choice : {ToolChoice::required, ToolChoice::automatic}) {
      OutputRequest rules;
      rules.functions = testing::weather_and_add();
      rules.tool_choice = choice;
      const std::unique_ptr<infer::TokenConstraint> c = cache.get(model, rules, false)->start(std::vector<int32_t>{});
      const std::string before = choice == ToolChoice::automatic ? "Hello " : "";
      for (const int32_t id : tokenizer.encode(before + inside_string, data::Specials::allowed)) {
        ASSERT_TRUE(allows(c->allowed(), id)) << tokenizer.decode({&id, 1});
        c->accept(id);
      }
      for (const std::string& m : markers) {
        EXPECT_FALSE(allows(c->allowed(), tokenizer.special_tokens().at(m))) << m << " inside a string";
        EXPECT_TRUE(allows(c->allowed(), static_cast<uint8_t>(m[0]))) << m << "'s text";
      }
    }
    OutputRequest automatic;
    automatic.functions = testing::weather_and_add();
    const std::unique_ptr<infer::TokenConstraint> c = cache.get(model, automatic, false)->start(std::vector<int32_t>{});
    for (const char ch : std::string("Hello ")) c->accept(static_cast<uint8_t>(ch));
    for (const std::string& m : markers)  // only the opening marker may open calls from free text
      EXPECT_EQ(allows(c->allowed(), tokenizer.special_tokens().at(m)), m == tool_calls_marker(format)) << m;
  }
}

// Llama's JSON calls and pythonic ones in auto mode: a reply that starts with the tag's token is
// calls, never text after it.
TEST(OutputConstraint, ATagTokenOpensCallsNotText) {
  for (const auto& [format, opening] :
       std::vector<std::pair<ToolFormat, char>>{{ToolFormat::llama3_json, '{'}, {ToolFormat::pythonic, '['}}) {
    SCOPED_TRACE(tool_format_name(format));
    ByteModel bytes(tool_call_markers(format), format);
    OutputRequest rules;
    rules.functions = testing::weather_and_add();
    const auto source = ConstraintCache().get(bytes.model, rules, false);
    const std::unique_ptr<infer::TokenConstraint> c = source->start(std::vector<int32_t>{});
    const int32_t tag = bytes.tokenizer.special_tokens().at(tool_calls_marker(format));
    ASSERT_TRUE(allows(c->allowed(), tag));
    ASSERT_TRUE(allows(c->allowed(), 'H'));  // text may start the reply
    c->accept(tag);
    EXPECT_FALSE(allows(c->allowed(), 'H'));
    EXPECT_FALSE(allows(c->allowed(), tag));
    EXPECT_TRUE(allows(c->allowed(), static_cast<uint8_t>(opening)));
  }
}

// How far `text` gets under the rules: the bytes taken before the first one refused, and whether
// the end of text may follow all of it.
struct Walk {
  size_t taken = 0;
  bool may_end = false;
};
Walk walk(const OutputRequest& rules, const std::string& text) {
  ByteModel bytes({});
  const data::Tokenizer& tokenizer = bytes.tokenizer;
  ConstraintModel& model = bytes.model;
  ConstraintCache cache;
  const int32_t end = tokenizer.end_of_text();
  const std::unique_ptr<infer::TokenConstraint> c = cache.get(model, rules, false)->start(std::vector<int32_t>{end});
  Walk w;
  for (; w.taken < text.size(); ++w.taken) {
    const int32_t id = static_cast<uint8_t>(text[w.taken]);
    if (!allows(c->allowed(), id)) return w;
    c->accept(id);
  }
  w.may_end = allows(c->allowed(), end);
  return w;
}

TEST(OutputConstraint, ARegexIsMatchedByTheWholeOutput) {
  OutputRequest rules;
  rules.regex = "\\d{3}-[a-z]{2}|ok";
  for (const std::string good : {"123-ab", "ok"}) {
    const Walk w = walk(rules, good);
    EXPECT_EQ(w.taken, good.size()) << good;
    EXPECT_TRUE(w.may_end) << good;
  }
  EXPECT_EQ(walk(rules, "x123-ab").taken, 0u);  // nothing before the match
  EXPECT_EQ(walk(rules, "123-abc").taken, 6u);  // nor after it
  EXPECT_EQ(walk(rules, "1234").taken, 3u);
  EXPECT_FALSE(walk(rules, "123-a").may_end);
  rules.regex = "^a+$";  // anchors say what a whole match says anyway
  EXPECT_TRUE(walk(rules, "aaa").may_end);
  EXPECT_EQ(walk(rules, "ab").taken, 1u);
}

// A cached constraint whose automaton has used half its states is built afresh for the next
// request, while the one under way goes on with its own.
TEST(OutputConstraint, ACachedConstraintWithAWornAutomatonIsBuiltAfresh) {
  ByteModel bytes({});
  OutputRequest rules;
  rules.regex = "(a{0,9000}b){0,9}";
  ConstraintCache cache;
  const auto first = cache.get(bytes.model, rules, false);
  EXPECT_EQ(cache.get(bytes.model, rules, false), first);
  const std::unique_ptr<infer::TokenConstraint> c = first->start(std::vector<int32_t>{});
  for (int group = 0; group < 4; ++group)
    for (const char byte : std::string(9000, 'a') + "b") {
      ASSERT_TRUE(allows(c->allowed(), static_cast<uint8_t>(byte)));
      c->accept(static_cast<uint8_t>(byte));
    }
  const auto second = cache.get(bytes.model, rules, false);
  EXPECT_NE(second, first);
  EXPECT_EQ(cache.get(bytes.model, rules, false), second);
  EXPECT_TRUE(allows(c->allowed(), 'a'));  // the request under way keeps its automaton
}

TEST(OutputConstraint, AChoiceIsOneOfItsTexts) {
  OutputRequest rules;
  rules.choice = std::vector<std::string>{"yes", "no", "maybe", "ĉu"};
  for (const std::string good : {"yes", "no", "maybe", "ĉu"}) {
    const Walk w = walk(rules, good);
    EXPECT_EQ(w.taken, good.size()) << good;
    EXPECT_TRUE(w.may_end) << good;
  }
  EXPECT_EQ(walk(rules, "mayo").taken, 3u);
  EXPECT_EQ(walk(rules, "yess").taken, 3u);
  EXPECT_FALSE(walk(rules, "ma").may_end);
}

// Magistral's [THINK] block left open by the prompt: any thoughts, its closing special token, then
// the document.
TEST(OutputConstraint, AReasoningBlockClosesWithItsControlToken) {
  ByteModel bytes({"[THINK]", "[/THINK]"});
  const data::Tokenizer& tokenizer = bytes.tokenizer;
  ConstraintModel& model = bytes.model;
  model.reasoning = reasoning_markers_named("mistral");
  OutputRequest rules;
  rules.choice = std::vector<std::string>{"yes", "no"};
  ConstraintCache cache;
  const int32_t end = tokenizer.end_of_text(), close = tokenizer.special_tokens().at("[/THINK]");
  const std::unique_ptr<infer::TokenConstraint> c = cache.get(model, rules, true)->start(std::vector<int32_t>{end});
  EXPECT_FALSE(allows(c->allowed(), tokenizer.special_tokens().at("[THINK]")));
  for (const int32_t id : tokenizer.encode("Hmm, [yes]?[/THINK]no", data::Specials::allowed)) {
    ASSERT_TRUE(allows(c->allowed(), id)) << tokenizer.decode({&id, 1});
    c->accept(id);
    if (id == close) {
      EXPECT_FALSE(allows(c->allowed(), close));  // once
    }
  }
  EXPECT_TRUE(allows(c->allowed(), end));
}

// A prompt that leaves <think> open: the thoughts, the closing marker, then at once the choice (as
// vLLM starts it: the content is exactly one of them); JSON may follow a little white space.
TEST(OutputConstraint, AfterReasoningAChoiceStartsAtOnce) {
  ByteModel bytes({});
  ConstraintModel& model = bytes.model;
  model.reasoning = ReasoningMarkers{};
  ConstraintCache cache;
  const auto taken = [&](const OutputRequest& rules, const std::string& text) {
    const std::unique_ptr<infer::TokenConstraint> c = cache.get(model, rules, true)->start(std::vector<int32_t>{});
    size_t n = 0;
    for (; n < text.size() && allows(c->allowed(), static_cast<uint8_t>(text[n])); ++n) c->accept(static_cast<uint8_t>(text[n]));
    return n;
  };
  OutputRequest choice;
  choice.choice = std::vector<std::string>{"yes", "no"};
  EXPECT_EQ(taken(choice, "hmm</think>yes"), 14u);
  EXPECT_EQ(taken(choice, "hmm</think>\nyes"), 11u);
  OutputRequest schema;
  schema.schema = nlohmann::ordered_json{{"type", "integer"}};
  EXPECT_EQ(taken(schema, "hmm</think>\n\n42"), 15u);
}

// Requests whose texts differ get constraints of their own, whatever the texts hold ("-" once
// stood for an absent field in the cache's key).
TEST(OutputConstraint, TheCacheKeepsDifferentRequestsApart) {
  ByteModel bytes(tool_call_markers(ToolFormat::hermes), ToolFormat::hermes);
  ConstraintModel& model = bytes.model;
  ConstraintCache cache;
  OutputRequest tools;
  tools.functions = testing::weather_and_add();
  OutputRequest tools_and_regex = tools;
  tools_and_regex.regex = "-";
  const auto a = cache.get(model, tools, false), b = cache.get(model, tools_and_regex, false);
  EXPECT_NE(a, b);
  EXPECT_TRUE(allows(a->start(std::vector<int32_t>{})->allowed(), 'x'));   // free text
  EXPECT_FALSE(allows(b->start(std::vector<int32_t>{})->allowed(), 'x'));  // "-" or the calls
}

TEST(OutputConstraint, ARegexThatCannotBeEnforcedIsA400NamingItsField) {
  ByteModel bytes({});
  ConstraintModel& model = bytes.model;
  ConstraintCache cache;
  for (const std::string bad : {"(?=a)b", "(a", "a{1000}{1000}", "\\1"}) {
    OutputRequest rules;
    rules.regex = bad;
    rules.format_field = "guided_regex";
    try {
      cache.get(model, rules, false);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400) << bad;
      EXPECT_EQ(e.param, "guided_regex") << bad;
      EXPECT_NE(std::string(e.what()).find("the regex cannot be enforced"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace difftx::serve
