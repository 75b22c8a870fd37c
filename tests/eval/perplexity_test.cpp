// difftx eval's arithmetic: on a small prepared dataset, the loss of evaluate_perplexity equals
// a direct computation over the same val windows (full-forward logits, log-softmax in double),
// every target is counted once, perplexity is exp(loss) and --max-batches stops early.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "data/loader.h"
#include "eval/perplexity.h"
#include "model/decoder.h"
#include "support/random_model.h"
#include "support/testing.h"
#include "support/word_dataset.h"

namespace difftx::eval {
namespace {

TEST(Perplexity, EqualsADirectComputationOverTheValWindows) {
  const testing::WordDataset ds;
  const model::ModelConfig c =
      testing::small_config(kernels::AttentionKind::diff, {.vocab_size = 300, .max_positions = 64});
  const model::Model model = testing::random_model(c, 9);

  const int64_t T = 16, B = 3, V = c.vocab_size;
  model::Activations acts(c, 1, T);
  const testing::DirectLoss want = testing::direct_val_loss(
      ds, T, V, [&](const int32_t* ids, float* logits) { model::decoder_logits(model, acts, ids, logits); });
  ASSERT_GT(want.count, 4 * B * T) << "the val split is too small for this test";

  int progress_calls = 0;
  data::TokenLoader val = data::sequential_loader(ds.data(), "val", B, T);
  const PerplexityResult r =
      evaluate_perplexity(model, val, {0, [&](const PerplexityProgress&) { ++progress_calls; }, {}});
  EXPECT_EQ(r.tokens, want.count);
  EXPECT_NEAR(r.loss, want.sum / want.count, 1e-5);
  EXPECT_NEAR(r.perplexity, std::exp(r.loss), 1e-9 * r.perplexity);
  EXPECT_EQ(progress_calls, r.batches);
  EXPECT_EQ(r.batches, (want.windows + B - 1) / B);

  const PerplexityResult two = evaluate_perplexity(model, val, {2, nullptr, {}});  // rewound: the same first windows
  EXPECT_EQ(two.batches, 2);
  EXPECT_EQ(two.tokens, 2 * B * T);

  EXPECT_NE(testing::error_of([&] { data::sequential_loader(ds.root / "nope", "val", B, T); })
                .find("data directory does not exist"),
            std::string::npos);
  data::TokenLoader too_long = data::sequential_loader(ds.data(), "val", B, c.max_position_embeddings + 1);
  EXPECT_NE(testing::error_of([&] { evaluate_perplexity(model, too_long, {}); }).find("exceeds the model's max_position_embeddings"),
            std::string::npos);
  data::TokenLoader random(ds.data(), "val", {.batch = B, .seq_len = T, .sampling = data::Sampling::random});
  EXPECT_NE(testing::error_of([&] { evaluate_perplexity(model, random, {}); }).find("must read its split in order"),
            std::string::npos);
  model::ModelConfig small = c;
  small.vocab_size = 100;  // the data's ids go past it
  model::Model too_small(small);
  EXPECT_NE(testing::error_of([&] { evaluate_perplexity(too_small, val, {}); })
                .find("tokens but the model has vocab_size 100 (data and model do not belong together)"),
            std::string::npos);
}

}  // namespace
}  // namespace difftx::eval
