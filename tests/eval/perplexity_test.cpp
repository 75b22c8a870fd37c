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
  const ModelConfig c = testing::small_config(AttentionKind::diff, {.vocab_size = 300, .max_positions = 64});
  const Model model = testing::random_model(c, 9);

  const int64_t T = 16, B = 3, V = c.vocab_size;
  data::TokenLoader windows(ds.data(), "val", {.batch = 1, .seq_len = T, .sampling = data::Sampling::sequential});
  std::vector<int32_t> in(T), tgt(T);
  std::vector<float> logits(T * V);
  Activations acts(c, 1, T);
  double sum = 0;
  int64_t count = 0;
  while (windows.next(in.data(), tgt.data()) > 0) {
    decoder_logits(model, acts, in.data(), logits.data());
    for (int64_t t = 0; t < T; ++t) {
      if (tgt[t] == kIgnoreId) continue;
      const float* row = logits.data() + t * V;
      double mx = row[0], z = 0;
      for (int64_t v = 1; v < V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
      for (int64_t v = 0; v < V; ++v) z += std::exp(row[v] - mx);
      sum += mx + std::log(z) - row[tgt[t]];
      ++count;
    }
  }
  ASSERT_GT(count, 4 * B * T) << "the val split is too small for this test";

  int progress_calls = 0;
  data::TokenLoader val = data::sequential_loader(ds.data(), "val", B, T);
  const PerplexityResult r =
      evaluate_perplexity(model, val, {0, [&](const PerplexityProgress&) { ++progress_calls; }, {}});
  EXPECT_EQ(r.tokens, count);
  EXPECT_NEAR(r.loss, sum / count, 1e-5);
  EXPECT_NEAR(r.perplexity, std::exp(r.loss), 1e-9 * r.perplexity);
  EXPECT_EQ(progress_calls, r.batches);
  EXPECT_EQ(r.batches, (windows.windows() + B - 1) / B);

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
  ModelConfig small = c;
  small.vocab_size = 100;  // the data's ids go past it
  Model too_small(small);
  EXPECT_NE(testing::error_of([&] { evaluate_perplexity(too_small, val, {}); })
                .find("tokens but the model has vocab_size 100 (data and model do not belong together)"),
            std::string::npos);
}

}  // namespace
}  // namespace difftx::eval
