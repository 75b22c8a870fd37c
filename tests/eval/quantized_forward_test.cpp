// The decoder's evaluation options (model/decoder.h ForwardOptions): bits = 0 is the trained
// model bit for bit; quantized logits reach decoder_logits and decoder_loss (the paths the
// retrieval and perplexity evaluations use), barely at 16 bits, clearly at 2 (weights scaled up
// six-fold for large attention logits, so that even a 16-bit step shows); bad widths fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "eval/logits_forward.h"
#include "model/decoder.h"
#include "support/random_model.h"
#include "support/testing.h"

namespace difftx::eval {
namespace {

TEST(QuantizedForward, ReachesLogitsAndLossOfEveryVariant) {
  for (kernels::AttentionKind attention :
       {kernels::AttentionKind::baseline, kernels::AttentionKind::diff, kernels::AttentionKind::diff2}) {
    SCOPED_TRACE(kernels::attention_kind_name(attention));
    const model::ModelConfig c = testing::small_config(attention, {.vocab_size = 29, .intermediate_size = 48});
    const model::Model model = testing::random_model(c, 4, 6.0f);  // logits far from 0
    const int64_t B = 2, T = 24, V = c.vocab_size;
    Rng rng(1);
    std::vector<int32_t> inputs(B * T), targets(B * T);
    for (auto& t : inputs) t = static_cast<int32_t>(rng.below(V));
    for (auto& t : targets) t = static_cast<int32_t>(rng.below(V));
    model::Activations acts(c, B, T);

    auto logits = [&](int bits) {
      std::vector<float> out(B * T * V);
      model::decoder_logits(model, acts, inputs.data(), out.data(), {bits});
      return out;
    };
    auto loss = [&](int bits) {
      const model::LossSum s = model::decoder_loss(model, acts, inputs.data(), targets.data(), {bits});
      return s.sum / s.count;
    };
    std::vector<float> plain(B * T * V);
    model::decoder_logits(model, acts, inputs.data(), plain.data());
    EXPECT_EQ(logits(0), plain);
    const model::LossSum s = model::decoder_loss(model, acts, inputs.data(), targets.data());
    EXPECT_EQ(loss(0), s.sum / s.count);

    double scale = 0;
    for (float x : plain) scale = std::max(scale, std::fabs(static_cast<double>(x)));
    const double d16 = testing::max_abs_diff(logits(16), plain), d2 = testing::max_abs_diff(logits(2), plain);
    EXPECT_LT(d16, 1e-2 * scale);
    EXPECT_GT(d2, 100 * d16);
    EXPECT_GT(d2, 0.1 * scale);
    const double l16 = std::fabs(loss(16) - s.sum / s.count), l2 = std::fabs(loss(2) - s.sum / s.count);
    EXPECT_LT(l16, 1e-3);
    EXPECT_GT(l2, 100 * l16);

    EXPECT_NE(testing::error_of([&] { logits(1); }).find("between 2 and 16, got 1"), std::string::npos);

    // The retrieval evaluators' forward carries the options too: its rows of the first
    // sequence are decoder_logits' at the same bit width.
    model::Activations one(c, 1, T);
    std::vector<float> expected(T * V), got(T * V);
    model::decoder_logits(model, one, inputs.data(), expected.data(), {2});
    std::vector<int64_t> rows(T);
    for (int64_t t = 0; t < T; ++t) rows[t] = t;
    model_forward(model, {2}).run({inputs.data(), static_cast<size_t>(T)}, rows, got.data());
    EXPECT_LT(testing::max_abs_diff(got, expected), 1e-4 * scale);
    EXPECT_GT(testing::max_abs_diff(got, std::vector<float>(plain.begin(), plain.begin() + T * V)), 10 * d16);
  }
}

}  // namespace
}  // namespace difftx::eval
