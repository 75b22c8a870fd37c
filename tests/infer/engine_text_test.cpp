// The engine's text and counts with a tokenizer (infer/engine.h): silent tokens write no text, a
// stop token ends a request without text but counts as generated, as OpenAI's and vLLM's usage
// count the end-of-sequence token, and stop strings are not matched in a reasoning block, nor in
// the closing marker a reasoning budget forces. generate() streams the same text.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"
#include "grammar/constraint.h"
#include "infer/engine.h"
#include "infer/generate.h"
#include "support/engine_runs.h"
#include "support/random_model.h"

namespace difftx::infer {
namespace {

using testing::Stream;

constexpr int32_t kEnd = 256, kMark = 257;

// A token per byte, then <|endoftext|> (kEnd) and <|mark|> (kMark).
data::Tokenizer byte_tokenizer() {
  data::TokenTable bytes;
  for (int b = 0; b < 256; ++b) bytes.insert(std::string(1, static_cast<char>(b)), b);
  return data::Tokenizer("bytes", std::move(bytes), data::gpt2_pattern(),
                         {{"<|endoftext|>", kEnd}, {"<|mark|>", kMark}});
}

const model::Model& byte_model() {
  static const model::Model model =
      testing::random_model(testing::engine_config(kernels::AttentionKind::baseline, 64, 258, 64), 3);
  return model;
}

// A request that takes `forced` in turn, through an engine of its own: its stream and the
// engine's stats.
struct Outcome {
  Stream stream;
  EngineStats stats;
};
Outcome run(const data::Tokenizer& tokenizer, RequestOptions o) {
  Engine engine(byte_model(), &tokenizer, {});
  o.max_new_tokens = static_cast<int64_t>(o.forced.size());
  Outcome out;
  testing::submit_recorded(engine, Request{{'x'}, std::move(o), {}, {}}, out.stream);
  engine.run_until_idle();
  out.stats = engine.stats();
  return out;
}

// A silent token is drawn (and counted) but writes no text, and stop strings are matched against
// the text without it, as vLLM's skip_special_tokens has them.
TEST(EngineText, SilentTokensWriteNoText) {
  const data::Tokenizer tokenizer = byte_tokenizer();
  const auto text = [&](std::vector<int32_t> silent, std::vector<std::string> stops) {
    RequestOptions o;
    o.forced = {'a', 'b', kMark, 'c', 'd'};
    o.silent_tokens = std::move(silent);
    o.stop_strings = std::move(stops);
    return run(tokenizer, o).stream;
  };
  EXPECT_EQ(text({}, {}).text(), "ab<|mark|>cd");
  const Stream silent = text({kEnd, kMark}, {});
  EXPECT_EQ(silent.text(), "abcd");
  EXPECT_EQ(silent.ids(), (std::vector<int32_t>{'a', 'b', kMark, 'c', 'd'}));
  EXPECT_EQ(text({kMark}, {"bc"}).text(), "a");
  EXPECT_EQ(text({kMark}, {"bc"}).finish(), FinishReason::stop);
  EXPECT_EQ(text({kMark}, {"zz", "bc"}).events.back().stop_string, "bc");  // which one ended it
  EXPECT_EQ(text({kMark}, {"zz"}).events.back().stop_string, "");          // none did
  RequestOptions included;  // vLLM's include_stop_str_in_output: the stop string stays
  included.forced = {'a', 'b', 'c', 'd'};
  included.stop_strings = {"bc"};
  included.include_stop_str = true;
  EXPECT_EQ(run(tokenizer, included).stream.text(), "abc");
  Engine engine(byte_model(), &tokenizer, {});
  Request unsorted{{'x'}, {}, {}, {}};
  unsorted.options.silent_tokens = {kMark, kEnd};
  Stream out;
  EXPECT_THROW(testing::submit_recorded(engine, unsorted, out), Error);
}

// generate() with the tokenizer streams the engine's text: the special tokens the model writes
// (<|mark|>, made likely here) write none where they are silent (difftx generate --chat, chat).
TEST(EngineText, GenerateStreamsTheTextButOfSilentTokens) {
  const data::Tokenizer tokenizer = byte_tokenizer();
  const auto text = [&](std::vector<int32_t> silent) {
    GenerateOptions o;
    o.sampling.temperature = 0;
    o.sampling.logit_bias = {{kMark, 100.0f}};
    o.max_new_tokens = 3;
    o.tokenizer = &tokenizer;
    o.silent_tokens = std::move(silent);
    std::string out;
    const std::vector<int32_t> prompt = {'x'};
    const GenerateResult r = generate(byte_model(), prompt, o, [&](const TokenEvent& e) { out += e.text; });
    EXPECT_EQ(r.new_tokens, 3);
    return out;
  };
  EXPECT_EQ(text({}), "<|mark|><|mark|><|mark|>");
  EXPECT_EQ(text({kMark}), "");
}

// The stop token that ends a request is generated: the last event's count and the stats hold it,
// also when it is the first token, though it is neither streamed nor text.
TEST(EngineText, StopTokenCountsAsGenerated) {
  const data::Tokenizer tokenizer = byte_tokenizer();
  for (const std::vector<int32_t>& forced : {std::vector<int32_t>{kEnd}, std::vector<int32_t>{'a', 'b', kEnd}}) {
    RequestOptions o;
    o.forced = forced;
    o.stop_tokens = {kEnd};
    const Outcome r = run(tokenizer, o);
    const auto n = static_cast<int64_t>(forced.size());
    EXPECT_EQ(r.stream.finish(), FinishReason::stop);
    EXPECT_EQ(r.stream.ids(), std::vector<int32_t>(forced.begin(), forced.end() - 1));
    EXPECT_EQ(r.stream.text(), std::string(forced.begin(), forced.end() - 1));
    EXPECT_EQ(r.stream.events.back().generated_tokens, n);
    EXPECT_EQ(r.stream.events.back().stop_token, kEnd);  // which one ended it (vLLM's stop_reason)
    EXPECT_EQ(r.stats.generated_tokens, n);
  }
  // Without a stop token, what was drawn: the same count.
  RequestOptions o;
  o.forced = {'a', 'b'};
  const Outcome r = run(tokenizer, o);
  EXPECT_EQ(r.stream.finish(), FinishReason::length);
  EXPECT_EQ(r.stream.events.back().stop_token, -1);
  EXPECT_EQ(r.stream.events.back().generated_tokens, 2);
  EXPECT_EQ(r.stats.generated_tokens, 2);
}

// A reasoning budget forces the block's closing marker token by token after 4 tokens of
// thoughts; stop strings that its bytes hold ("</th", "ink>") cut neither it nor the thoughts.
TEST(EngineText, StopStringsSkipTheReasoningBlockAndItsForcedClose) {
  const data::Tokenizer tokenizer = byte_tokenizer();
  grammar::ReasoningBudget budget;
  budget.block = {{"<think>", "</think>"}, true};
  budget.close_ids = tokenizer.encode("</think>", data::Specials::allowed);
  budget.budget = 4;
  grammar::ConstraintSpec spec;
  spec.vocabulary = grammar::TokenVocabulary::of(tokenizer, 258);
  spec.reasoning = budget;
  for (double temperature : {0.0, 1.0}) {
    RequestOptions o;
    o.constraint = std::make_shared<grammar::GrammarConstraintSource>(spec);
    o.reasoning = budget.block;
    o.stop_strings = {"</th", "ink>"};
    o.sampling.temperature = temperature;
    o.max_new_tokens = 16;
    Engine engine(byte_model(), &tokenizer, {});
    Stream s;
    testing::submit_recorded(engine, Request{{'x'}, std::move(o), {}, {}}, s);
    engine.run_until_idle();
    const std::vector<int32_t> ids = s.ids();
    ASSERT_GE(ids.size(), 12u) << s.text();
    EXPECT_EQ(std::vector<int32_t>(ids.begin() + 4, ids.begin() + 12), budget.close_ids);
    EXPECT_NE(s.text().find("</think>"), std::string::npos) << s.text() << " (temperature " << temperature << ")";
  }
}

}  // namespace
}  // namespace difftx::infer
