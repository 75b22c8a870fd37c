// The constraint a request's tool calls make (serve/output_constraint.h), over a tokenizer whose
// tool-call markers are control tokens, as Kimi's, InternLM's and GLM's tokenizers have them:
// every marker of a family's calls, not only the opening one, may be drawn as its token where the
// grammar has it, and nowhere else.
#include <gtest/gtest.h>

#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"
#include "serve/output_constraint.h"
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
      {ToolFormat::nemotron_json, R"(<TOOLCALL>[{"name": "add", "arguments": {"a": 1, "b": 2}}]</TOOLCALL>)"}};
  for (const auto& [format, reply] : replies) {
    SCOPED_TRACE(tool_format_name(format));
    const std::vector<std::string> markers = tool_call_markers(format);
    const data::Tokenizer tokenizer = byte_tokenizer_with(markers);
    ConstraintModel model;
    model.tokenizer = &tokenizer;
    model.vocabulary = grammar::TokenVocabulary::of(tokenizer, tokenizer.vocab_size());
    model.tool_format = format;
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
    if (last_marker != ids.front()) EXPECT_FALSE(allows(c->allowed(), last_marker)) << markers.back();
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE(allows(c->allowed(), ids[i])) << "token " << i << " '" << tokenizer.decode({&ids[i], 1}) << "'";
      c->accept(ids[i]);
    }
    EXPECT_TRUE(allows(c->allowed(), end));
  }
}

}  // namespace
}  // namespace difftx::serve
