// The engine with a token constraint (infer/token_constraint.h, grammar/constraint.h) on
// random-weight models: whatever the weights, the output is a document the schema validates,
// ending with `stop` where nothing may follow; a constrained request's tokens do not depend on
// its neighbours (batch invariance); a reasoning block before the document; the sampler's mask
// (only allowed ids drawn, greedy and sampled; no allowed id an error).
#include <gtest/gtest.h>

#include "grammar/json_grammar.h"
#include "io/json_file.h"
#include "support/json_vocabulary.h"
#include "support/random_model.h"
#include "support/schema_check.h"

namespace difftx::infer {
namespace {

using nlohmann::json;
using testing::json_vocabulary;
using testing::schema_constraint;
using testing::Stream;
using testing::text_of;
constexpr int64_t kVocab = testing::kJsonVocab;
constexpr int32_t kEos = testing::kJsonEos;

Request request(std::vector<int32_t> prompt, double temperature, uint64_t seed,
                std::shared_ptr<const TokenConstraintSource> c) {
  Request r{std::move(prompt), {}, {}, {}};
  r.options.sampling.temperature = temperature;
  r.options.sampling.seed = seed;
  r.options.max_new_tokens = 200;
  r.options.stop_tokens = {kEos};
  r.options.logprobs = true;
  r.options.constraint = std::move(c);
  return r;
}

const char* kSchemas[] = {
    R"({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99},
        "b": {"enum": ["x", "yy", null]}, "c": {"type": "boolean"}}, "required": ["a", "b"],
        "additionalProperties": false})",
    R"({"type": "array", "items": {"type": "string", "maxLength": 3}, "minItems": 1, "maxItems": 3})",
    R"({"anyOf": [{"type": "number", "minimum": -2.5, "maximum": 3},
                  {"type": "string", "pattern": "^[abxyz]{1,4}$"}]})",
};

TEST(ConstrainedEngine, OutputValidatesWhateverTheWeights) {
  const auto v = json_vocabulary();
  for (kernels::AttentionKind kind : {kernels::AttentionKind::baseline, kernels::AttentionKind::diff2}) {
    testing::SmallShape shape;
    shape.vocab_size = kVocab;
    for (uint64_t model_seed : {1, 2}) {
      const model::Model model = testing::random_model(testing::small_config(kind, shape), model_seed, 4.0f);
      for (int s = 0; s < 3; ++s) {
        const json schema = json::parse(kSchemas[s]);
        const auto c = schema_constraint(nlohmann::ordered_json::parse(kSchemas[s]), v);
        Engine engine(model, nullptr);
        std::vector<Stream> streams(6);
        for (int i = 0; i < 6; ++i)
          testing::submit_recorded(
              engine, request({1, 2, 3, static_cast<int32_t>(i)}, i == 0 ? 0.0 : 0.5 * i, 100 + i, c), streams[i]);
        engine.run_until_idle();
        for (const Stream& st : streams) {
          const std::string text = text_of(st, *v);
          ASSERT_EQ(st.finish(), FinishReason::stop) << kSchemas[s] << "\n" << text;
          json value;
          ASSERT_NO_THROW(value = io::parse_json_text(text, "output")) << text;
          EXPECT_EQ(testing::schema_violation(schema, value), "") << kSchemas[s] << "\n" << text;
        }
      }
    }
  }
}

TEST(ConstrainedEngine, TokensDoNotDependOnNeighbours) {
  const auto v = json_vocabulary();
  testing::SmallShape shape;
  shape.vocab_size = kVocab;
  const model::Model model = testing::random_model(testing::small_config(kernels::AttentionKind::diff, shape), 5, 4.0f);
  const auto c = schema_constraint(nlohmann::ordered_json::parse(kSchemas[0]), v);
  const Request r = request({4, 5, 6, 7, 8}, 0.9, 77, c);
  Stream alone;
  {
    Engine engine(model, nullptr);
    testing::submit_recorded(engine, r, alone);
    engine.run_until_idle();
  }
  Stream beside;
  std::vector<Stream> others(4);
  {
    EngineOptions o;
    o.max_batch_tokens = 7;  // chunked prompts, rows of several requests per step
    Engine engine(model, nullptr, o);
    testing::submit_recorded(engine, request({9, 9, 9, 9, 9, 9, 9, 9, 9}, 1.0, 1, nullptr), others[0]);
    testing::submit_recorded(
        engine, request({3, 1}, 0.7, 2, schema_constraint(nlohmann::ordered_json::parse(kSchemas[1]), v)), others[1]);
    testing::submit_recorded(engine, r, beside);
    testing::submit_recorded(engine, request({4, 5, 6, 7, 8}, 0.9, 78, c), others[2]);
    testing::submit_recorded(engine, request({2}, 0.0, 3, c), others[3]);
    engine.run_until_idle();
  }
  ASSERT_EQ(beside.ids(), alone.ids());
  EXPECT_EQ(beside.logprobs(), alone.logprobs());
  EXPECT_EQ(alone.finish(), FinishReason::stop);
}

TEST(ConstrainedEngine, ReasoningBlockThenTheDocument) {
  // The grammar of a prompt that left a think block open: any text, "</think>", the document.
  const auto v = json_vocabulary();
  grammar::GrammarBuilder b;
  grammar::JsonGrammar j(b);
  const int32_t doc = j.schema(nlohmann::ordered_json::parse(kSchemas[0]));
  const auto g = b.build(b.add_rule("root", {{grammar::GrammarBuilder::ref(b.text_without("</think>")[0]),
                                              grammar::GrammarBuilder::ref(j.one_of_literals({"</think>"})), j.ws(),
                                              grammar::GrammarBuilder::ref(doc)}}));
  grammar::ConstraintSpec spec;
  spec.vocabulary = v;
  spec.grammar = std::make_shared<grammar::TokenMasks>(g, v);
  grammar::ReasoningBudget budget;
  for (int32_t id = 0; id < v->size(); ++id)
    if (v->bytes(id) == "</think>") budget.close_ids = {id};
  budget.block.open_at_start = true;
  budget.budget = 5;
  spec.reasoning = budget;
  const auto source = std::make_shared<grammar::GrammarConstraintSource>(spec);
  testing::SmallShape shape;
  shape.vocab_size = kVocab;
  const model::Model model =
      testing::random_model(testing::small_config(kernels::AttentionKind::baseline, shape), 9, 4.0f);
  for (uint64_t seed = 0; seed < 6; ++seed) {
    Engine engine(model, nullptr);
    Stream st;
    testing::submit_recorded(engine, request({1, 2}, 1.0, seed, source), st);
    engine.run_until_idle();
    const std::string text = text_of(st, *v);
    const size_t close = text.find("</think>");
    ASSERT_NE(close, std::string::npos) << text;
    const json value = io::parse_json_text(text.substr(close + 8), "document");
    EXPECT_EQ(testing::schema_violation(json::parse(kSchemas[0]), value), "") << text;
    // The budget: at most 5 tokens before the closing marker's token.
    const std::vector<int32_t> ids = st.ids();
    const auto at = std::find(ids.begin(), ids.end(), budget.close_ids[0]);
    EXPECT_LE(at - ids.begin(), 5) << text;
  }
}

TEST(ConstrainedSampler, DrawsOnlyAllowedIds) {
  std::vector<float> logits(100);
  Rng rng(1);
  for (float& l : logits) l = static_cast<float>(rng.normal());
  std::vector<uint64_t> mask(2, 0);
  for (int id : {3, 17, 64, 99}) mask[id >> 6] |= uint64_t{1} << (id & 63);
  for (double t : {0.0, 0.7, 5.0}) {
    SamplingOptions o;
    o.temperature = t;
    o.top_k = 2;
    o.seed = 4;
    o.presence_penalty = t > 1 ? 1.0 : 0.0;
    Sampler s(o, 100);
    for (int i = 0; i < 200; ++i) {
      const int32_t id = s.sample(logits.data(), mask.data());
      ASSERT_TRUE(id == 3 || id == 17 || id == 64 || id == 99) << id;
    }
  }
  SamplingOptions greedy;
  greedy.temperature = 0;
  Sampler g(greedy, 100);
  int32_t best = 3;
  for (int id : {17, 64, 99})
    if (logits[id] > logits[best]) best = id;
  EXPECT_EQ(g.sample(logits.data(), mask.data()), best);
  std::vector<uint64_t> none(2, 0);
  EXPECT_THROW(g.sample(logits.data(), none.data()), Error);
  // Without a mask the draw is what it always was: the same ids as before masks existed.
  SamplingOptions o;
  o.seed = 9;
  Sampler a(o, 100), b(o, 100);
  std::vector<uint64_t> all(2, ~uint64_t{0});
  for (int i = 0; i < 50; ++i) ASSERT_EQ(a.sample(logits.data()), b.sample(logits.data(), all.data()));
}

}  // namespace
}  // namespace difftx::infer
