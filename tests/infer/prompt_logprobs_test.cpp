// A request's prompt scores (RequestOptions::prompt_logprobs, vLLM's prompt_logprobs): each prompt
// token's log-probability, rank and likeliest alternatives after the tokens before it, against a
// float64 log-softmax of the same logits run through the decode path; bit-identical alone, beside
// others, in small chunks, after preemption and with the prompt's prefix in the cache (which a
// scored prompt does not take), on a hybrid stack too; a request that wants no token; bad options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include "core/rng.h"
#include "support/engine_runs.h"
#include "support/random_model.h"

namespace difftx::infer {
namespace {

using kernels::AttentionKind;
using testing::Stream;

constexpr int64_t kVocab = 96;

model::ModelConfig config(AttentionKind kind) { return testing::engine_config(kind, 64, kVocab, 512); }

std::vector<int32_t> random_tokens(Rng& rng, int64_t n) { return testing::random_tokens(rng, n, kVocab); }

Request scored(std::vector<int32_t> prompt, int64_t new_tokens, int top) {
  Request r{std::move(prompt), {}, {}, {}};
  r.options.max_new_tokens = new_tokens;
  r.options.sampling.temperature = 0;
  r.options.prompt_logprobs = top;
  return r;
}

Stream run(const model::Model& model, const std::vector<Request>& requests, size_t which, EngineOptions o = {}) {
  Engine engine(model, nullptr, o);
  std::vector<Stream> streams(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) testing::submit_recorded(engine, requests[i], streams[i]);
  for (int steps = 0; engine.step(); ++steps) EXPECT_LT(steps, 2000) << "no progress";
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  return streams[which];
}

// The first event's prompt scores, bit for bit.
void expect_same_scores(const Stream& got, const Stream& want, const std::string& what) {
  ASSERT_FALSE(got.events.empty()) << what;
  ASSERT_FALSE(want.events.empty()) << what;
  const auto& a = got.events.front().prompt_logprobs;
  const auto& b = want.events.front().prompt_logprobs;
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].logprob, b[i].logprob) << what << " token " << i + 1;
    EXPECT_EQ(a[i].rank, b[i].rank) << what << " token " << i + 1;
    ASSERT_EQ(a[i].top.size(), b[i].top.size()) << what;
    for (size_t k = 0; k < a[i].top.size(); ++k) {
      EXPECT_EQ(a[i].top[k].id, b[i].top[k].id) << what << " token " << i + 1;
      EXPECT_EQ(a[i].top[k].logprob, b[i].top[k].logprob) << what << " token " << i + 1;
    }
  }
}

// The scores of prompt tokens 1..n-1 against the model's own logits after each prefix (the first
// token prefilled, the others fed back through the decode path), log-softmax in float64: the
// logprob within the rows' order difference, the rank and the alternatives as those logits give them.
TEST(PromptLogprobs, MatchAFloat64LogSoftmaxOfTheModelsLogits) {
  for (const AttentionKind kind : {AttentionKind::baseline, AttentionKind::diff, AttentionKind::diff2}) {
    const model::Model model = testing::random_model(config(kind), 3);
    Rng rng(4);
    const std::vector<int32_t> prompt = random_tokens(rng, 40);
    EngineOptions o;
    o.kv = kernels::KvStorage::f32;  // as engine_logits stores them
    const Stream out = run(model, {scored(prompt, 2, 3)}, 0, o);
    ASSERT_FALSE(out.events.empty());
    const auto& scores = out.events.front().prompt_logprobs;
    ASSERT_EQ(scores.size(), prompt.size() - 1);
    const std::vector<float> logits =
        testing::engine_logits(model, std::span(prompt).first(1), std::span(prompt).subspan(1));
    for (size_t i = 0; i + 1 < prompt.size(); ++i) {
      const float* row = logits.data() + i * kVocab;
      const int32_t id = prompt[i + 1];
      double max = row[0], total = 0;
      for (int64_t v = 1; v < kVocab; ++v) max = std::max<double>(max, row[v]);
      for (int64_t v = 0; v < kVocab; ++v) total += std::exp(row[v] - max);
      const double want = row[id] - max - std::log(total);
      const std::string what = std::string(kernels::attention_kind_name(kind)) + " token " + std::to_string(i + 1);
      EXPECT_NEAR(scores[i].logprob, want, 1e-4) << what;
      // The rank and the likeliest id, where no other logit is within the rows' difference.
      int64_t rank = 1, near = 0;
      for (int64_t v = 0; v < kVocab; ++v) rank += row[v] > row[id], near += v != id && std::abs(row[v] - row[id]) < 1e-4;
      if (near == 0) {
        EXPECT_EQ(scores[i].rank, rank) << what;
      }
      ASSERT_EQ(scores[i].top.size(), 3u);
      std::vector<float> sorted(row, row + kVocab);
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      if (sorted[0] - sorted[1] > 1e-4) {
        EXPECT_EQ(scores[i].top[0].id, std::max_element(row, row + kVocab) - row) << what;
      }
      EXPECT_NEAR(scores[i].top[2].logprob, sorted[2] - max - std::log(total), 1e-4) << what;
    }
  }
}

// Scoring the prompt changes nothing of what is generated, and the scores are the same bits
// alone, beside other requests and in chunks of 7 rows. Where the prompt's prefix is cached (the
// same prompt unscored ran before), a scored request takes none of it: it computes every position.
TEST(PromptLogprobs, BitIdenticalInAnyBatchChunkingAndCache) {
  const model::Model model = testing::random_model(config(AttentionKind::diff), 5);
  Rng rng(6);
  const std::vector<int32_t> prompt = random_tokens(rng, 70);
  const Request r = scored(prompt, 6, 2);
  const Stream alone = run(model, {r}, 0);
  Request plain = r;
  plain.options.prompt_logprobs.reset();
  const Stream unscored = run(model, {plain}, 0);
  EXPECT_EQ(alone.ids(), unscored.ids());
  EXPECT_TRUE(unscored.events.front().prompt_logprobs.empty());

  const std::vector<Request> crowd = {scored(random_tokens(rng, 30), 9, 1), r, scored(random_tokens(rng, 50), 4, 0)};
  EngineOptions chunked;
  chunked.max_batch_tokens = 7;
  for (const EngineOptions& o : {EngineOptions{}, chunked}) {
    Engine engine(model, nullptr, o);
    Stream first, again;
    testing::submit_recorded(engine, plain, first);
    engine.run_until_idle();
    std::vector<Stream> streams(crowd.size());
    for (size_t i = 0; i < crowd.size(); ++i) testing::submit_recorded(engine, crowd[i], streams[i]);
    engine.run_until_idle();
    testing::submit_recorded(engine, plain, again);
    engine.run_until_idle();
    expect_same_scores(streams[1], alone, "among others");
    EXPECT_EQ(streams[1].ids(), alone.ids());
    EXPECT_EQ(streams[1].events.back().cached_tokens, 0);
    EXPECT_GT(again.events.back().cached_tokens, 0);  // the blocks were there to take
  }
}

// A hybrid stack (Mamba state, sliding windows, the cross layers) scores a prompt the same alone,
// beside others and in chunks of 5 rows, and as many tokens as it has.
TEST(PromptLogprobs, AHybridStackScoresTheSameInAnyBatch) {
  const model::Model model = testing::random_model(testing::small_hybrid_config(), 6);
  Rng rng(8);
  const Request r = scored(testing::random_tokens(rng, 30, model.config.vocab_size), 4, 2);
  const Stream alone = run(model, {r}, 0);
  ASSERT_FALSE(alone.events.empty());
  EXPECT_EQ(alone.events.front().prompt_logprobs.size(), 29u);
  EngineOptions chunked;
  chunked.max_batch_tokens = 5;
  const std::vector<Request> crowd = {scored(testing::random_tokens(rng, 12, model.config.vocab_size), 6, 0), r};
  for (const EngineOptions& o : {EngineOptions{}, chunked}) {
    const Stream among = run(model, crowd, 1, o);
    expect_same_scores(among, alone, "hybrid among others");
    EXPECT_EQ(among.ids(), alone.ids());
  }
}

// Two scored prompts in a pool too small for both: preemption (within a prompt, which is then
// scored again, or after it) leaves the scores and tokens the same bits as alone.
TEST(PromptLogprobs, PreemptedInATightPoolScoresTheSame) {
  const model::Model model = testing::random_model(config(AttentionKind::baseline), 8);
  EngineOptions o;
  o.kv_block_tokens = 16;
  o.kv_tokens = 320;
  o.max_batch_tokens = 33;
  Rng rng(2);
  const std::vector<Request> both = {scored(random_tokens(rng, 300), 8, 2), scored(random_tokens(rng, 290), 8, 2)};
  Engine engine(model, nullptr, o);
  Stream a, b;
  testing::submit_recorded(engine, both[0], a);
  testing::submit_recorded(engine, both[1], b);
  for (int steps = 0; engine.step(); ++steps) ASSERT_LT(steps, 1000) << "no progress";
  EXPECT_GT(engine.stats().preemptions, 0);
  EngineOptions roomy = o;
  roomy.kv_tokens = 0;
  expect_same_scores(a, run(model, {both[0]}, 0, roomy), "first prompt");
  expect_same_scores(b, run(model, {both[1]}, 0, roomy), "second prompt");
  EXPECT_EQ(a.ids(), run(model, {both[0]}, 0, roomy).ids());
}

// The scores' arithmetic on a table model (each row's logits a function of its token): the
// logprob is the float64 log-softmax's, the rank counts the ids above (ties share it), the
// alternatives are the likeliest ids, equal logits by ascending id.
TEST(PromptLogprobs, RankAndAlternativesOnATable) {
  const model::Model model = testing::random_model(testing::engine_config(AttentionKind::baseline, 64, 6, 256), 1);
  const auto table = [](int32_t token) {
    std::vector<float> row = {0.5f, 2.0f, 2.0f, -1.0f, 1.0f, 0.0f};
    row[static_cast<size_t>(token)] += 0.25f;
    return row;
  };
  Engine engine(model, nullptr, EngineOptions{}, testing::forward_by_token(table));
  Stream out;
  const std::vector<int32_t> prompt = {3, 0, 2, 5, 1};
  testing::submit_recorded(engine, scored(prompt, 0, 2), out);
  engine.run_until_idle();
  ASSERT_EQ(out.events.size(), 1u);
  const auto& scores = out.events[0].prompt_logprobs;
  ASSERT_EQ(scores.size(), 4u);
  for (size_t i = 0; i < scores.size(); ++i) {
    const std::vector<float> row = table(prompt[i]);
    double total = 0;
    for (float x : row) total += std::exp(static_cast<double>(x));
    const int32_t id = prompt[i + 1];
    EXPECT_NEAR(scores[i].logprob, row[id] - std::log(total), 1e-6) << i;
    EXPECT_EQ(scores[i].rank, 1 + std::count_if(row.begin(), row.end(), [&](float x) { return x > row[id]; })) << i;
  }
  // After 0 (0.75, 2, 2, ...): token 2 ties with 1 for the top, rank 1; after 2 (.., 2.25, ..): 5 is rank 5.
  EXPECT_EQ(scores[1].rank, 1);
  EXPECT_EQ(scores[2].rank, 5);
  EXPECT_EQ(scores[1].top[0].id, 1);
  EXPECT_EQ(scores[1].top[1].id, 2);
  EXPECT_EQ(scores[2].top[0].id, 2);
  EXPECT_EQ(scores[2].top[1].id, 1);
}

// max_new_tokens 0 with prompt_logprobs: the prompt runs, one last event carries its scores (no
// token, `length`); without prompt_logprobs the request ends at once with nothing. A one-token
// prompt has no score. Out-of-range options are errors.
TEST(PromptLogprobs, ARequestForNoTokenScoresItsPromptOnly) {
  const model::Model model = testing::random_model(config(AttentionKind::diff2), 9);
  Rng rng(1);
  const std::vector<int32_t> prompt = random_tokens(rng, 25);
  const Stream only = run(model, {scored(prompt, 0, 1)}, 0);
  ASSERT_EQ(only.events.size(), 1u);
  EXPECT_EQ(only.events[0].id, -1);
  EXPECT_EQ(only.finish(), FinishReason::length);
  EXPECT_EQ(only.events[0].generated_tokens, 0);
  EXPECT_EQ(only.events[0].prompt_tokens, 25);
  expect_same_scores(only, run(model, {scored(prompt, 3, 1)}, 0), "no token against three");
  Request plain = scored(prompt, 0, 1);
  plain.options.prompt_logprobs.reset();
  EXPECT_TRUE(run(model, {plain}, 0).events.at(0).prompt_logprobs.empty());
  EXPECT_TRUE(run(model, {scored({5}, 0, 1)}, 0).events.at(0).prompt_logprobs.empty());

  Engine engine(model, nullptr);
  EXPECT_THROW(engine.submit(scored(prompt, 1, kMaxTopLogprobs + 1)), Error);
  EXPECT_THROW(engine.submit(scored(prompt, 1, -1)), Error);
  EngineOptions narrow;
  narrow.sample_vocab = 50;
  Engine drawing_fewer(model, nullptr, narrow);
  EXPECT_THROW(drawing_fewer.submit(scored({1, 2, 70}, 1, 0)), Error);
}

}  // namespace
}  // namespace difftx::infer
