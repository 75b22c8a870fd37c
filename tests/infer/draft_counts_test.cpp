// Speculative decoding's counts (EngineStats::draft_tokens, draft_accepted): every drafted token
// is accepted or rejected (those after a rejected one with it), but the tokens drafted after one
// that ends the request were never to be verified, and are neither.
#include <gtest/gtest.h>

#include <algorithm>

#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"
#include "support/engine_runs.h"
#include "support/random_model.h"

namespace difftx::infer {
namespace {

using testing::Stream;

// A byte-level tokenizer whose ids 0 to 63 write '0' to 'o', one character each.
data::Tokenizer printable_tokenizer() {
  data::TokenTable bytes;
  for (int i = 0; i < 256; ++i) bytes.insert(std::string(1, static_cast<char>((i + '0') % 256)), i);
  return data::Tokenizer("printable", std::move(bytes), data::gpt2_pattern(), {{"<|endoftext|>", 256}});
}

// The model drafting for itself has every draft it drafts accepted, and the request ends at a
// stop string in the middle of a run it would draft: the draft ends there (DraftGuard), no draft
// past it is counted, so the counts still say every draft was accepted.
TEST(DraftCounts, DraftsAfterTheEndAreNotCounted) {
  const data::Tokenizer tokenizer = printable_tokenizer();
  const model::Model model =
      testing::random_model(testing::engine_config(kernels::AttentionKind::diff, 64, 258, 256), 7);
  EngineOptions plain;
  plain.sample_vocab = 64;  // printable ids only
  EngineOptions self = plain;
  self.draft = DraftMode::model;
  self.draft_model = &model;
  self.draft_tokens = 8;
  const auto run = [&](const EngineOptions& o, std::vector<std::string> stops, EngineStats& st) {
    Engine engine(model, &tokenizer, o);
    Request r{{1, 2, 3, 4, 5, 6, 7, 8}, {}, {}, {}};
    r.options.max_new_tokens = 30;
    r.options.sampling.temperature = 0;
    r.options.stop_strings = std::move(stops);
    Stream out;
    testing::submit_recorded(engine, r, out);
    engine.run_until_idle();
    st = engine.stats();
    return out;
  };
  EngineStats st;
  const std::vector<int32_t> ids = run(plain, {}, st).ids();
  ASSERT_EQ(ids.size(), 30u);
  // A stop string at the first token after the fourth that was not drawn before it.
  size_t at = 4;
  while (at < ids.size() && std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(at), ids[at]) !=
                                ids.begin() + static_cast<std::ptrdiff_t>(at))
    ++at;
  ASSERT_LT(at + 2, ids.size()) << "the greedy output repeats its first tokens: pick another prompt";
  const Stream got = run(self, {tokenizer.decode({&ids[at], 1})}, st);
  EXPECT_EQ(got.ids(), std::vector<int32_t>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(at + 1)));
  EXPECT_EQ(got.finish(), FinishReason::stop);
  EXPECT_GT(st.draft_tokens, 0);
  EXPECT_EQ(st.draft_accepted, st.draft_tokens) << "drafts after the stop string were counted as rejected";
}

// A forward whose every row favours token 0, and a prompt whose prompt lookup proposes 0 1 2
// after the first token (0): the step takes 0 and rejects 1, and 2 is rejected with it.
TEST(DraftCounts, DraftsAfterARejectedOneAreRejected) {
  const model::Model model =
      testing::random_model(testing::engine_config(kernels::AttentionKind::baseline, 64, 4, 256), 1);
  const StepForward zeros =
      testing::forward_by_token([](int32_t) { return std::vector<float>{5.0f, 0.0f, 0.0f, 0.0f}; });
  EngineOptions o;
  o.draft = DraftMode::ngram;
  o.draft_tokens = 3;
  Engine engine(model, nullptr, o, zeros);
  Request r{{3, 0, 0, 1, 2, 3}, {}, {}, {}};
  r.options.max_new_tokens = 10;
  r.options.sampling.temperature = 0;
  Stream out;
  testing::submit_recorded(engine, r, out);
  ASSERT_TRUE(engine.step());  // the prompt, and the first token
  EXPECT_EQ(engine.stats().draft_tokens, 0);
  ASSERT_TRUE(engine.step());  // 0 1 2 drafted: 0 taken
  EXPECT_EQ(engine.stats().draft_tokens, 3);
  EXPECT_EQ(engine.stats().draft_accepted, 1);
  EXPECT_EQ(out.ids(), (std::vector<int32_t>{0, 0, 0}));
}

}  // namespace
}  // namespace difftx::infer
