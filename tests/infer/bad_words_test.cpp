// vLLM's bad_words in the engine (infer/bad_words.h): which ends a request's generated tokens ban,
// a one-token word never drawn and a longer one's last token banned only after the rest (the
// prompt not counting), the next likeliest drawn instead; drafts keeping to them; greedy output
// the same with prompt lookup drafting as without, no bad word in it; bad options are errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/rng.h"
#include "infer/bad_words.h"
#include "infer/draft_guard.h"
#include "support/engine_runs.h"
#include "support/random_model.h"

namespace difftx::infer {
namespace {

using kernels::AttentionKind;
using testing::Stream;

TEST(BadWords, EndsTheGeneratedTokensWouldComplete) {
  const std::vector<std::vector<int32_t>> words = {{5}, {1, 2, 3}, {2, 4}, {7, 7}};
  const auto ends = [&](std::vector<int32_t> generated) {
    std::vector<int32_t> out;
    bad_word_ends(words, generated, out);
    return out;
  };
  EXPECT_EQ(ends({}), (std::vector<int32_t>{5}));
  EXPECT_EQ(ends({1, 2}), (std::vector<int32_t>{5, 3, 4}));
  EXPECT_EQ(ends({2}), (std::vector<int32_t>{5, 4}));
  EXPECT_EQ(ends({9, 1, 2, 7}), (std::vector<int32_t>{5, 7}));
  EXPECT_EQ(ends({2, 1}), (std::vector<int32_t>{5}));
}

// A draft keeps to them as the request's draw would: after the generated 2, or a drafted one, 3
// is refused (and out of the draft model's mask); 5 always.
TEST(BadWords, DraftsKeepToThem) {
  const std::vector<std::vector<int32_t>> words = {{2, 3}, {5}};
  const std::vector<int32_t> generated = {7, 2};
  DraftGuard guard(nullptr, {}, 10, {}, 0, {words, generated});
  EXPECT_FALSE(mask_allows(guard.allowed(), 3));
  EXPECT_TRUE(mask_allows(guard.allowed(), 4));
  EXPECT_FALSE(guard.take(3));
  EXPECT_FALSE(guard.take(5));
  EXPECT_TRUE(guard.take(1));
  EXPECT_TRUE(guard.take(2));
  EXPECT_FALSE(guard.take(3));
  EXPECT_TRUE(guard.take(4));
  EXPECT_TRUE(guard.take(3));
}

// A table model whose every row favours the token after its own (0 1 2 3 0 ...), the one after
// that second, and so on.
Stream run_cycle(const std::vector<int32_t>& prompt, const std::function<void(RequestOptions&)>& change,
                 DraftMode draft = DraftMode::none) {
  EngineOptions o;
  o.draft = draft;
  const auto cycle = [](int32_t t) {
    std::vector<float> row(4);
    for (int32_t k = 1; k <= 4; ++k) row[static_cast<size_t>((t + k) % 4)] = static_cast<float>(4 - k);
    return row;
  };
  return testing::run_on_table(cycle, prompt, [&](RequestOptions& r) {
    r.max_new_tokens = 6;
    change(r);
  }, o);
}

// After the prompt's 0 the cycle is 1 2 3 0 1 2. Banning 3 alone, 2 is followed by its next
// likeliest, 0; banning "2 3", the same; banning "0 1", 1 still comes first (the prompt's 0 does
// not count) and later the generated 0 is followed by 2.
TEST(BadWords, TheLastTokenIsBannedAfterTheRest) {
  const auto with = [](std::vector<std::vector<int32_t>> words) {
    return [words](RequestOptions& o) { o.bad_words = words; };
  };
  EXPECT_EQ(run_cycle({0}, with({})).ids(), (std::vector<int32_t>{1, 2, 3, 0, 1, 2}));
  EXPECT_EQ(run_cycle({0}, with({{3}})).ids(), (std::vector<int32_t>{1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(run_cycle({0}, with({{2, 3}})).ids(), (std::vector<int32_t>{1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(run_cycle({0}, with({{0, 1}})).ids(), (std::vector<int32_t>{1, 2, 3, 0, 2, 3}));
  // Drafting by prompt lookup (the prompt holds the cycle to copy) gives the same tokens.
  const std::vector<int32_t> cycle = {0, 1, 2, 3, 0, 1, 2, 3, 0};
  for (const auto& words : std::vector<std::vector<std::vector<int32_t>>>{{}, {{3}}, {{2, 3}}, {{0, 1}}})
    EXPECT_EQ(run_cycle(cycle, with(words), DraftMode::ngram).ids(), run_cycle(cycle, with(words)).ids());
}

// A random model: the greedy output with two-token bad words taken from its own greedy output
// holds none of them, and is the same with prompt lookup drafting.
TEST(BadWords, GreedyWithADraftIsTheSameAndHoldsNone) {
  const model::Model model = testing::random_model(testing::engine_config(AttentionKind::diff, 64, 96, 512), 4);
  Rng rng(3);
  const std::vector<int32_t> prompt = testing::random_tokens(rng, 40, 96);
  const auto run = [&](const std::vector<std::vector<int32_t>>& words, DraftMode draft) {
    EngineOptions o;
    o.draft = draft;
    Engine engine(model, nullptr, o);
    Request r{prompt, {}, {}, {}};
    r.options.max_new_tokens = 40;
    r.options.sampling.temperature = 0;
    r.options.bad_words = words;
    Stream out;
    testing::submit_recorded(engine, r, out);
    engine.run_until_idle();
    return out.ids();
  };
  const std::vector<int32_t> plain = run({}, DraftMode::none);
  ASSERT_GE(plain.size(), 10u);
  const std::vector<std::vector<int32_t>> words = {{plain[2], plain[3]}, {plain[7]}, {plain[5], plain[6], plain[7]}};
  const std::vector<int32_t> banned = run(words, DraftMode::none);
  EXPECT_NE(banned, plain);
  for (const auto& word : words)
    EXPECT_EQ(std::search(banned.begin(), banned.end(), word.begin(), word.end()), banned.end());
  EXPECT_EQ(run(words, DraftMode::ngram), banned);
}

TEST(BadWords, BadOptionsAreErrors) {
  const model::Model model = testing::random_model(testing::engine_config(AttentionKind::baseline, 64, 96, 512), 1);
  Engine engine(model, nullptr);
  Request r{{1, 2}, {}, {}, {}};
  r.options.bad_words = {{}};
  EXPECT_THROW(engine.submit(r), Error);
  r.options.bad_words = {{96}};
  EXPECT_THROW(engine.submit(r), Error);
  r.options.bad_words = {std::vector<int32_t>(kMaxBadWordTokens + 1, 1)};
  EXPECT_THROW(engine.submit(r), Error);
  r.options.bad_words = std::vector<std::vector<int32_t>>(kMaxBadWords + 1, {1});
  EXPECT_THROW(engine.submit(r), Error);
}

}  // namespace
}  // namespace difftx::infer
