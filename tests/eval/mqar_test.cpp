// Associative recall: an episode is EOT, P distinct key-value pairs from disjoint pools, then Q
// distinct keys each followed by its value; the same seed gives the same episode; the evaluator
// scores a hand-built forward exactly (accuracy and answer loss); bad specs are clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "data/tasks/mqar.h"
#include "data/tasks/retrieval_fixture.h"
#include "eval/retrieval/mqar_eval.h"
#include "support/testing.h"

namespace difftx::retrieval {
namespace {

using difftx::testing::error_of;
using testing::retrieval_data;
using eval::LogitsForward;

TEST(Mqar, PoolsSplitTheOrdinaryTokensAboveTheBytes) {
  const auto& tok = retrieval_data().tokenizer;
  const MqarVocabulary v = mqar_vocabulary(tok);
  EXPECT_EQ(v.first_key, 256);
  EXPECT_EQ(v.end, tok.ranks().rank_end());
  EXPECT_EQ(v.first_value, 256 + (v.end - 256) / 2);
  EXPECT_EQ(v.end_of_text, tok.end_of_text());
  EXPECT_GE(v.end_of_text, v.end) << "the end-of-text id is no key or value";
}

TEST(Mqar, EpisodesAreWellFormedAndSeeded) {
  const MqarVocabulary v = mqar_vocabulary(retrieval_data().tokenizer);
  for (auto [pairs, queries] : {std::pair{1, 1}, {5, 3}, {16, 8}, {20, 20}}) {
    const MqarSpec spec{pairs, queries};
    for (uint64_t seed : {1, 2, 3}) {
      const MqarSample s = make_mqar_sample(spec, v, seed);
      ASSERT_EQ(static_cast<int64_t>(s.tokens.size()), mqar_length(spec));
      EXPECT_EQ(s.tokens[0], v.end_of_text);
      std::map<int32_t, int32_t> value_of;
      std::set<int32_t> values;
      for (int64_t i = 0; i < pairs; ++i) {
        const int32_t k = s.tokens[1 + 2 * i], val = s.tokens[2 + 2 * i];
        EXPECT_TRUE(k >= v.first_key && k < v.first_value) << k;
        EXPECT_TRUE(val >= v.first_value && val < v.end) << val;
        EXPECT_TRUE(value_of.emplace(k, val).second) << "keys must be distinct";
        EXPECT_TRUE(values.insert(val).second) << "values must be distinct";
      }
      ASSERT_EQ(static_cast<int64_t>(s.answers.size()), queries);
      std::set<int32_t> asked;
      for (int64_t j = 0; j < queries; ++j) {
        const int64_t a = s.answers[j];
        EXPECT_EQ(a, 1 + 2 * pairs + 2 * j + 1);
        ASSERT_TRUE(value_of.count(s.tokens[a - 1])) << "a query is one of the keys";
        EXPECT_EQ(s.tokens[a], value_of[s.tokens[a - 1]]) << "the answer is the key's value";
        EXPECT_TRUE(asked.insert(s.tokens[a - 1]).second) << "queries must be distinct";
      }
      EXPECT_EQ(make_mqar_sample(spec, v, seed).tokens, s.tokens);
      if (pairs > 1) {
        EXPECT_NE(make_mqar_sample(spec, v, seed + 100).tokens, s.tokens);
      }
    }
  }
}

TEST(Mqar, BadSpecsAreClearErrors) {
  const MqarVocabulary v = mqar_vocabulary(retrieval_data().tokenizer);
  const int64_t pool = std::min(v.first_value - v.first_key, v.end - v.first_value);
  EXPECT_NE(error_of([&] { make_mqar_sample({0, 1}, v, 1); }).find("pairs P = 0"), std::string::npos);
  EXPECT_NE(error_of([&] { make_mqar_sample({4, 5}, v, 1); }).find("queries Q = 5 must be in [1, P = 4]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make_mqar_sample({pool + 1, 1}, v, 1); }).find("the pools hold"), std::string::npos);
}

// The logits at position t put 10 on the id pick(tokens, t) and 0 elsewhere.
LogitsForward pick_forward(int64_t V, int64_t max_tokens, std::function<int32_t(std::span<const int32_t>, size_t)> pick) {
  return {V, max_tokens, [V, pick](std::span<const int32_t> tokens, std::span<const int64_t> rows, float* out) {
            std::fill(out, out + rows.size() * V, 0.0f);
            for (size_t i = 0; i < rows.size(); ++i) out[i * V + pick(tokens, rows[i])] = 10.0f;
          }};
}

TEST(MqarEval, ScoresAHandBuiltForwardExactly) {
  const auto& tok = retrieval_data().tokenizer;
  const MqarVocabulary v = mqar_vocabulary(tok);
  const int64_t V = tok.vocab_size();
  const MqarEvalOptions o{{8, 4}, 25, 3};
  // Knows the next token: every answer right; loss -log(e^10 / (e^10 + V - 1)).
  const MqarResult right = evaluate_mqar(
      pick_forward(V, 64, [](auto tokens, size_t t) { return t + 1 < tokens.size() ? tokens[t + 1] : 0; }), v, V, o);
  EXPECT_EQ(right.answers, 25 * 4);
  EXPECT_EQ(right.correct, right.answers);
  EXPECT_NEAR(right.loss, std::log(std::exp(10.0) + V - 1) - 10.0, 1e-6);
  // Repeats the query key: never right; loss -log(1 / (e^10 + V - 1)).
  const MqarResult echo = evaluate_mqar(pick_forward(V, 64, [](auto tokens, size_t t) { return tokens[t]; }), v, V, o);
  EXPECT_EQ(echo.correct, 0);
  EXPECT_NEAR(echo.loss, std::log(std::exp(10.0) + V - 1), 1e-6);
  // Right on even answers only.
  const MqarResult half = evaluate_mqar(
      pick_forward(V, 64, [](auto tokens, size_t t) { return t + 1 < tokens.size() && tokens[t + 1] % 2 == 0 ? tokens[t + 1] : 0; }),
      v, V, o);
  int64_t even = 0;
  for (int64_t i = 0; i < o.samples; ++i) {
    const MqarSample s = make_mqar_sample(o.spec, v, derive_rng(o.seed, {uint64_t(i)}).next_u64());
    for (int64_t a : s.answers) even += s.tokens[a] % 2 == 0;
  }
  EXPECT_EQ(half.correct, even);
  EXPECT_GT(even, 0);
  EXPECT_LT(even, half.answers);

  const nlohmann::json j = results::to_json(mqar_results(half));
  EXPECT_EQ(j["pairs"], 8);
  EXPECT_EQ(j["queries"], 4);
  EXPECT_EQ(j["samples"], 25);
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), static_cast<double>(even) / half.answers);

  EXPECT_NE(error_of([&] { evaluate_mqar(pick_forward(V, 20, [](auto, size_t) { return 0; }), v, V, o); })
                .find("is 25 tokens, past the model's max_position_embeddings 20"),
            std::string::npos);
}

TEST(MqarEval, TheInterruptRunsAfterEveryEpisodeAndWhatItThrowsEndsTheRun) {
  const auto& tok = retrieval_data().tokenizer;
  const int64_t V = tok.vocab_size();
  const LogitsForward forward = pick_forward(V, 64, [](auto, size_t) { return 0; });
  const MqarEvalOptions o{{8, 4}, 25, 3};
  int64_t calls = 0;
  evaluate_mqar(forward, mqar_vocabulary(tok), V, o, [&] { ++calls; });
  EXPECT_EQ(calls, 25);
  struct Stop {};
  calls = 0;
  EXPECT_THROW(evaluate_mqar(forward, mqar_vocabulary(tok), V, o, [&] { if (++calls == 3) throw Stop{}; }), Stop);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace difftx::retrieval
