// Sampling: greedy is the argmax whatever the seed; a seed fixes the draws; temperature, top-k,
// top-p and min-p give the distributions they promise; the presence and frequency penalties
// lower the logits of drawn tokens as OpenAI defines them; a logit bias moves its tokens' logits
// (frequencies over many seeded draws against the renormalised probabilities computed here in
// double).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "infer/sampler.h"

namespace difftx::infer {
namespace {

// Frequencies of each id over n draws.
std::map<int32_t, double> frequencies(Sampler& s, const std::vector<float>& logits, int n) {
  std::map<int32_t, double> f;
  for (int i = 0; i < n; ++i) f[s.sample(logits.data())] += 1.0 / n;
  return f;
}

// softmax(logits / temperature) restricted to `ids`, renormalised.
std::map<int32_t, double> expected(const std::vector<float>& logits, double temperature, const std::vector<int32_t>& ids) {
  std::map<int32_t, double> p;
  double total = 0;
  for (int32_t id : ids) total += (p[id] = std::exp(logits[id] / temperature));
  for (auto& [id, v] : p) v /= total;
  return p;
}

void expect_distribution(const std::map<int32_t, double>& got, const std::map<int32_t, double>& want) {
  for (const auto& [id, f] : got) EXPECT_TRUE(want.count(id)) << "drew id " << id << ", outside the kept set";
  // 20000 draws: a frequency's standard deviation is at most 0.0035; 0.015 is over 4 of them.
  for (const auto& [id, p] : want) EXPECT_NEAR(got.count(id) ? got.at(id) : 0.0, p, 0.015) << "id " << id;
}

const std::vector<float> kLogits = {0.1f, 2.0f, -1.0f, 1.5f, 1.5f, 0.7f, -3.0f, 1.0f};

TEST(Sampler, GreedyIsTheArgmaxWithTheLowestIdAmongEquals) {
  for (uint64_t seed : {1, 2, 3}) {
    Sampler s({0.0, 0, 1.0, seed}, 8);
    EXPECT_EQ(s.sample(kLogits.data()), 1);
  }
  const std::vector<float> tie = {0.5f, 3.0f, 3.0f, 1.0f};
  Sampler s({0.0, 0, 1.0, 9}, 4);
  EXPECT_EQ(s.sample(tie.data()), 1);
  // Ids past the sampler's vocabulary (model columns the tokenizer lacks) are never chosen.
  Sampler narrow({0.0, 0, 1.0, 9}, 3);
  const std::vector<float> big_tail = {0.0f, 0.5f, 0.2f, 9.0f};
  EXPECT_EQ(narrow.sample(big_tail.data()), 1);
}

TEST(Sampler, TheSeedFixesTheDraws) {
  auto draws = [](uint64_t seed) {
    Sampler s({1.0, 0, 0.9, seed}, 8);
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i) out.push_back(s.sample(kLogits.data()));
    return out;
  };
  EXPECT_EQ(draws(42), draws(42));
  EXPECT_NE(draws(42), draws(43));
}

TEST(Sampler, TemperatureScalesTheSoftmax) {
  for (double temperature : {0.5, 1.0, 2.0}) {
    Sampler s({temperature, 0, 1.0, 7}, 8);
    expect_distribution(frequencies(s, kLogits, 20000), expected(kLogits, temperature, {0, 1, 2, 3, 4, 5, 6, 7}));
  }
}

TEST(Sampler, TopKKeepsTheKMostLikely) {
  Sampler s({1.0, 3, 1.0, 8}, 8);
  expect_distribution(frequencies(s, kLogits, 20000), expected(kLogits, 1.0, {1, 3, 4}));
  Sampler one({1.0, 1, 1.0, 8}, 8);  // top-1 is greedy
  for (int i = 0; i < 50; ++i) EXPECT_EQ(one.sample(kLogits.data()), 1);
}

TEST(Sampler, TopPKeepsTheShortestPrefixHoldingP) {
  // Probabilities 0.5, 0.3, 0.15, 0.05 (ids 2, 0, 3, 1): p = 0.7 keeps {2, 0} (0.5 < 0.7 <= 0.8).
  const std::vector<float> logits = {std::log(0.3f), std::log(0.05f), std::log(0.5f), std::log(0.15f)};
  Sampler s({1.0, 0, 0.7, 4}, 4);
  expect_distribution(frequencies(s, logits, 20000), {{2, 0.5 / 0.8}, {0, 0.3 / 0.8}});
  Sampler both({1.0, 3, 0.96, 4}, 4);  // top-k 3 first (drops id 1), then 0.96 of what is left
  expect_distribution(frequencies(both, logits, 20000), expected(logits, 1.0, {2, 0, 3}));
}

// One check, each caller's name: the library's callers (C API, Python, the server) give fields,
// the CLI flags; the Sampler itself names the fields.
TEST(Sampler, OptionErrorsNameTheOptionAsTheCallerSpellsIt) {
  EXPECT_EQ(option_name("top_p", OptionSpelling::field), "top_p");
  EXPECT_EQ(option_name("max_batch_tokens", OptionSpelling::flag), "--max-batch-tokens");
  const auto error = [](const SamplingOptions& o, OptionSpelling spelling) {
    try {
      check_sampling_options(o, spelling);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  SamplingOptions o;
  o.temperature = -1;
  EXPECT_EQ(error(o, OptionSpelling::field), "temperature -1 must be >= 0 (0 is greedy)");
  EXPECT_EQ(error(o, OptionSpelling::flag), "--temperature -1 must be >= 0 (0 is greedy)");
  try {
    Sampler(o, 8);
    ADD_FAILURE() << "temperature -1 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "temperature -1 must be >= 0 (0 is greedy)");
  }
  o = {};
  o.frequency_penalty = 2.5;
  EXPECT_EQ(error(o, OptionSpelling::flag), "--frequency-penalty 2.5 must be in [-2, 2]");
  o = {};
  o.repetition_penalty = 0;
  EXPECT_EQ(error(o, OptionSpelling::field), "repetition_penalty 0 must be in (0, 10] (1 is off)");
  o = {};
  EXPECT_EQ(error(o, OptionSpelling::flag), "(no error)");
}

TEST(Sampler, BadOptionsAndLogitsAreClearErrors) {
  EXPECT_THROW(Sampler({-1.0, 0, 1.0, 1}, 8), Error);
  EXPECT_THROW(Sampler({1.0, -2, 1.0, 1}, 8), Error);
  EXPECT_THROW(Sampler({1.0, 0, 0.0, 1}, 8), Error);
  EXPECT_THROW(Sampler({1.0, 0, 1.5, 1}, 8), Error);
  std::vector<float> bad = kLogits;
  bad[5] = NAN;
  Sampler s({1.0, 0, 1.0, 1}, 8);
  try {
    s.sample(bad.data());
    ADD_FAILURE() << "a NaN logit was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("token 5"), std::string::npos) << e.what();
  }
}

TEST(Sampler, MinPKeepsTokensWithinAFactorOfTheMostLikely) {
  SamplingOptions o;
  o.temperature = 1.0;
  o.min_p = 0.5;  // p >= 0.5 p_max: logit >= 2.0 + ln 0.5 = 1.31 keeps ids 1, 3, 4
  o.seed = 5;
  Sampler s(o, 8);
  expect_distribution(frequencies(s, kLogits, 20000), expected(kLogits, 1.0, {1, 3, 4}));
}

TEST(Sampler, PenaltiesLowerTheLogitsOfDrawnTokens) {
  // Greedy: without penalties id 1 forever; a frequency penalty of 0.3 per draw moves the argmax
  // to id 3 after two draws of id 1 (2.0 - 0.6 < 1.5), then to id 4 (ids 3 and 4 tie at 1.5,
  // the lower id first), and so on.
  SamplingOptions o;
  o.temperature = 0;
  o.frequency_penalty = 0.3;
  Sampler s(o, 8);
  std::vector<int32_t> drawn;
  for (int i = 0; i < 4; ++i) drawn.push_back(s.sample(kLogits.data()));
  EXPECT_EQ(drawn, (std::vector<int32_t>{1, 1, 3, 4}));
  // A presence penalty counts once: after id 1, 2.0 - 0.6 < 1.5 picks 3, then 4, then 7 (1.0)
  // loses to 1 again (1.4).
  o.frequency_penalty = 0;
  o.presence_penalty = 0.6;
  Sampler p(o, 8);
  drawn.clear();
  for (int i = 0; i < 4; ++i) drawn.push_back(p.sample(kLogits.data()));
  EXPECT_EQ(drawn, (std::vector<int32_t>{1, 3, 4, 1}));
  // A taken token counts like a drawn one.
  Sampler t(o, 8);
  EXPECT_EQ(t.take(kLogits.data(), 1), 1);
  EXPECT_EQ(t.sample(kLogits.data()), 3);
  EXPECT_THROW(t.take(kLogits.data(), 8), Error);
  o.presence_penalty = 2.5;
  EXPECT_THROW(Sampler(o, 8), Error);
  o.presence_penalty = 0;
  o.min_p = 1.5;
  EXPECT_THROW(Sampler(o, 8), Error);
}

// transformers' and vLLM's repetition penalty: a token of the prompt or the output so far has its
// logit divided by the penalty where positive and multiplied where negative, once however often it
// appeared, after the logit bias and before the frequency and presence penalties subtract;
// prompt ids outside the vocabulary are ignored.
TEST(Sampler, RepetitionPenaltyActsOnThePromptsAndTheOutputsTokens) {
  SamplingOptions o;
  o.temperature = 0;
  o.repetition_penalty = 2;
  const auto greedy = [&](const std::vector<float>& logits, std::vector<int32_t> prompt, int n) {
    Sampler s(o, static_cast<int64_t>(logits.size()));
    s.note_prompt(prompt);
    std::vector<int32_t> drawn;
    for (int i = 0; i < n; ++i) drawn.push_back(s.sample(logits.data()));
    return drawn;
  };
  // Id 3 of the prompt falls to 0.75: after id 1 (2.0 -> 1.0), id 4 (1.5 -> 0.75), then ids 1
  // and 7 tie at 1.0 and the lower id wins, however often it was drawn.
  EXPECT_EQ(greedy(kLogits, {3, 2, 9, -1}, 4), (std::vector<int32_t>{1, 4, 1, 1}));
  EXPECT_EQ(greedy(kLogits, {}, 4), (std::vector<int32_t>{1, 3, 4, 1}));  // id 3 unpenalised
  // A negative logit is multiplied: -0.5 of the prompt's id 1 becomes -1, below id 0's -0.8.
  EXPECT_EQ(greedy({-0.8f, -0.5f, -2.0f}, {1}, 1), std::vector<int32_t>{0});
  EXPECT_EQ(greedy({-0.8f, -0.5f, -2.0f}, {2}, 1), std::vector<int32_t>{1});
  // Divided first, then the frequency penalty: id 0 drawn once is 2.0 / 2 - 1 = 0 < 0.4 (the
  // other order, (2.0 - 1) / 2 = 0.5, would draw it again).
  o.frequency_penalty = 1;
  EXPECT_EQ(greedy({2.0f, 0.4f}, {0}, 2), (std::vector<int32_t>{0, 1}));
  // The logit bias comes first, as vLLM applies it: (1.0 + 1) / 2 = 1.0 < 1.2 (after the penalty
  // it would be 1.5).
  o.frequency_penalty = 0;
  o.logit_bias = {{0, 1.0f}};
  EXPECT_EQ(greedy({1.0f, 1.2f}, {0}, 1), std::vector<int32_t>{1});
  o.logit_bias = {};
  // The draft sampler's copy (Sampler::count_as) holds the prompt's tokens and the draws.
  o.frequency_penalty = 0;
  Sampler target(o, 8), draft(o, 8);
  target.note_prompt(std::vector<int32_t>{3});
  EXPECT_EQ(target.sample(kLogits.data()), 1);
  draft.count_as(target);
  DraftDistribution q;
  EXPECT_EQ(draft.propose(kLogits.data(), q), 4);
  EXPECT_EQ(draft.propose(kLogits.data(), q), 1);  // the proposed 4 counts too: 0.75 < 1.0
  o.repetition_penalty = 0;
  EXPECT_THROW(Sampler(o, 8), Error);
  o.repetition_penalty = 10.5;
  EXPECT_THROW(Sampler(o, 8), Error);
}

// OpenAI's logit_bias: -100 bans the argmax and +2 lifts id 2 to the top, greedy; sampled, the
// draws follow softmax(logits + bias), with the penalties on top and in proposals too; the
// logits given are not changed; ids outside the vocabulary, repeated ids and biases outside
// [-100, 100] are errors.
TEST(Sampler, LogitBiasMovesItsTokensLogits) {
  SamplingOptions o;
  o.temperature = 0;
  o.logit_bias = {{1, -100.0f}};
  EXPECT_EQ(Sampler(o, 8).sample(kLogits.data()), 3);  // 3 and 4 tie at 1.5: the lower id
  o.logit_bias = {{2, 3.5f}, {1, -0.1f}};
  EXPECT_EQ(Sampler(o, 8).sample(kLogits.data()), 2);  // -1.0 + 3.5 = 2.5 > 2.0 - 0.1
  const std::vector<float> before = kLogits;
  o.temperature = 1.0;
  o.seed = 3;
  o.logit_bias = {{6, 4.0f}, {1, -1.0f}, {5, 0.5f}};
  Sampler s(o, 8);
  std::vector<float> biased = kLogits;
  for (const auto& [id, b] : o.logit_bias) biased[id] += b;
  expect_distribution(frequencies(s, kLogits, 20000), expected(biased, 1.0, {0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(kLogits, before);
  DraftDistribution q;  // a proposal's distribution is the biased one
  Sampler drafter(o, 8);
  ASSERT_GE(drafter.propose(kLogits.data(), q), 0);
  const std::map<int32_t, double> want = expected(biased, 1.0, {0, 1, 2, 3, 4, 5, 6, 7});
  ASSERT_EQ(q.ids.size(), 8u);
  for (size_t i = 0; i < q.ids.size(); ++i) EXPECT_NEAR(q.probs[i], want.at(q.ids[i]), 1e-6) << q.ids[i];
  // With a frequency penalty: id 1, biased up to 3.0, wins until three draws cost it 1.8.
  SamplingOptions p;
  p.temperature = 0;
  p.frequency_penalty = 0.6;
  p.logit_bias = {{1, 1.0f}};
  Sampler penalized(p, 8);
  std::vector<int32_t> drawn;
  for (int i = 0; i < 4; ++i) drawn.push_back(penalized.sample(kLogits.data()));
  EXPECT_EQ(drawn, (std::vector<int32_t>{1, 1, 1, 3}));
  for (const std::vector<std::pair<int32_t, float>>& bad :
       {std::vector<std::pair<int32_t, float>>{{8, 1.0f}}, {{-1, 1.0f}}, {{2, 1.0f}, {2, -1.0f}}, {{0, 100.5f}},
        {{0, NAN}}}) {
    o.logit_bias = bad;
    EXPECT_THROW(Sampler(o, 8), Error) << bad.front().first;
  }
}

}  // namespace
}  // namespace difftx::infer
