// A draft model's proposal length (infer/draft_length.h): the request's whole allowance while the
// target takes the drafts, one token a step while it rejects them, growing back when it takes
// them again; tokens the request's constraint forces are drafted beyond it.
#include <gtest/gtest.h>

#include "infer/draft_length.h"
#include "infer/model_drafter.h"
#include "support/json_vocabulary.h"
#include "support/random_model.h"

namespace difftx::infer {
namespace {

using testing::kJsonVocab;

// The window is the k with the most tokens a step for its time: (1 + a + ... + a^k) / (1 + 0.4 k).
TEST(DraftLength, GetsTheMostTokensForTheTime) {
  DraftLength length;
  EXPECT_NEAR(length.acceptance(), 4 / 4.5, 1e-12);
  EXPECT_EQ(length.window(64), 4);  // 1.541 tokens a step's time, against 1.537 at 3 and 1.521 at 5
  EXPECT_EQ(length.window(3), 3);
  EXPECT_EQ(length.window(1), 1);
  for (int i = 0; i < 50; ++i) length.observe(0, true);
  EXPECT_LT(length.acceptance(), 0.5);
  EXPECT_EQ(length.window(64), 1) << "a draft the target rejects is drafted at length";
  for (int i = 0; i < 50; ++i) length.observe(64, false);
  EXPECT_GT(length.acceptance(), 0.99);
  EXPECT_EQ(length.window(6), 6);
  EXPECT_GT(length.window(64), 10) << "a draft the target always takes stays short";
  EXPECT_LT(length.window(64), 64);
}

class ModelDraftLength : public ::testing::Test {
 protected:
  ModelDraftLength()
      : model_(testing::random_model(testing::small_config(kernels::AttentionKind::diff, shape()), 3, 4.0f)),
        drafter_(model_, kJsonVocab, kernels::KvStorage::f32, 1024, 1024, 64, OptionSpelling::field) {}

  static testing::SmallShape shape() {
    testing::SmallShape s;
    s.vocab_size = kJsonVocab;
    return s;
  }
  // A proposal of up to `max` tokens for the sequence so far, without a constraint.
  const Draft& propose(int64_t max) {
    DraftGuard guard(nullptr, {}, kJsonVocab);
    drafter_.propose(0, tokens_, max, nullptr, guard, draft_);
    return draft_;
  }

  model::Model model_;
  ModelDrafter drafter_;
  std::vector<int32_t> tokens_ = {1, 2, 3, 4};
  Draft draft_;
};

TEST_F(ModelDraftLength, FollowsTheTargetsVerdicts) {
  EXPECT_EQ(propose(6).tokens.size(), 4u) << "a fresh sequence drafts the prior's window";
  // The target rejects every first draft: its own token differs.
  for (int round = 0; round < 6; ++round) {
    ASSERT_FALSE(draft_.tokens.empty());
    tokens_.push_back((draft_.tokens[0] + 1) % kJsonVocab);
    propose(6);
  }
  EXPECT_EQ(draft_.tokens.size(), 1u) << "drafts the target keeps rejecting stay long";
  // The target takes every draft, then draws one more.
  size_t last = draft_.tokens.size();
  for (int round = 0; round < 30 && last < 6; ++round) {
    tokens_.insert(tokens_.end(), draft_.tokens.begin(), draft_.tokens.end());
    tokens_.push_back(5);
    propose(6);
    EXPECT_GE(draft_.tokens.size(), last) << "round " << round;
    last = draft_.tokens.size();
  }
  EXPECT_EQ(last, 6u) << "drafts the target takes again do not grow back";
}

// Where the window is one token, the tokens a constraint forces are drafted beyond it: the target
// takes them whatever it prefers.
TEST_F(ModelDraftLength, ForcedTokensAreDraftedBeyondTheWindow) {
  propose(6);
  for (int round = 0; round < 6; ++round) {
    tokens_.push_back((draft_.tokens[0] + 1) % kJsonVocab);
    propose(6);
  }
  ASSERT_EQ(draft_.tokens.size(), 1u);
  tokens_.push_back((draft_.tokens[0] + 1) % kJsonVocab);
  const auto v = testing::json_vocabulary();
  const auto source = testing::schema_constraint(nlohmann::ordered_json::parse(R"({"const": "qwkjq"})"), v);
  const auto request = source->start({});
  int32_t quote = 0;
  while (v->bytes(quote) != "\"") ++quote;
  request->accept(quote);  // the string is open: each of its characters, then its end, is forced
  DraftGuard guard(request.get(), {}, kJsonVocab);
  EXPECT_TRUE(guard.forced());
  drafter_.propose(0, tokens_, 30, nullptr, guard, draft_);
  std::string text;
  for (int32_t id : draft_.tokens) text += v->bytes(id);
  EXPECT_EQ(text, "qwkjq\"");
  EXPECT_TRUE(guard.ended());
  EXPECT_FALSE(guard.forced());
  EXPECT_FALSE(DraftGuard(nullptr, {}, kJsonVocab).forced());
}

// A cache with no room for a sequence and its draft: nothing is drafted for it (nothing run), the
// other sequence's rows stay; once that one is released, it drafts.
TEST(ModelDrafter, DraftsNothingWhereItsCacheHasNoRoom) {
  testing::SmallShape shape;
  shape.vocab_size = kJsonVocab;
  const model::Model model = testing::random_model(testing::small_config(kernels::AttentionKind::diff, shape), 3);
  ModelDrafter drafter(model, kJsonVocab, kernels::KvStorage::f32, 64, 1024, 64, OptionSpelling::field);  // 2 blocks
  std::vector<int32_t> first(40), second(10);
  for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int32_t>(i % 7 + 1);
  for (size_t i = 0; i < second.size(); ++i) second[i] = static_cast<int32_t>(i % 5 + 2);
  Draft draft;
  const auto propose = [&](uint64_t seq, const std::vector<int32_t>& tokens) {
    DraftGuard guard(nullptr, {}, kJsonVocab);
    drafter.propose(seq, tokens, 6, nullptr, guard, draft);
    return draft.tokens.size();
  };
  EXPECT_GT(propose(0, first), 0u);  // 45 positions: both blocks
  EXPECT_EQ(propose(1, second), 0u);
  EXPECT_EQ(propose(1, second), 0u);
  drafter.release(0);
  EXPECT_GT(propose(1, second), 0u);
}

}  // namespace
}  // namespace difftx::infer
