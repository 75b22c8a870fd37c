// AdamW over a whole parameter arena (src/train/optimizer.h) updates chunks of every tensor in
// one parallel region; the result must be exactly the per-tensor update of adamw_update
// (elementwise, so bitwise the same), with decay on matrices only and the clipping scale.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_kernels.h"
#include "kernels/ops.h"
#include "model/config.h"
#include "model/parameters.h"
#include "support/backend_case.h"
#include "support/testing.h"
#include "train/optimizer.h"

namespace difftx::train {
namespace {

TEST(AdamWArena, EqualsTensorByTensorUpdatesWithTensorsSpanningSeveralChunks) {
  // diff: gains and lambda vectors (no decay) beside matrices; the embedding (300 x 64 = 19200
  // floats) and the MLP matrices (176 x 64 = 11264) straddle the 16384-float chunks.
  const model::ModelConfig config = model::config_from_json(
      nlohmann::json{{"model_type", "difftx"}, {"attention", "diff"}, {"vocab_size", 300}, {"hidden_size", 64},
                     {"num_hidden_layers", 2}, {"num_attention_heads", 2}, {"num_key_value_heads", 2},
                     {"head_dim", 16}},
      "test config");
  const model::ParameterTable table(config);
  const int64_t n = table.total_floats();
  Rng rng(7);
  std::vector<float> weights = testing::random_vector(n, rng), expected = weights;
  AdamW optimizer(backends::cpu_backend(), table, AdamWConfig{});
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  int decayed = 0, kept = 0;
  for (int64_t step = 1; step <= 3; ++step) {
    const std::vector<float> grads = testing::random_vector(n, rng, -2.0, 2.0);
    const double norm = optimizer.gradient_norm(testing::host_ptr<const float>(grads.data()));
    ASSERT_GT(norm, 1.0);  // so that clipping (grad_clip 1) scales the gradient
    optimizer.step(testing::host_ptr(weights.data()), testing::host_ptr<const float>(grads.data()), 1e-2, norm);
    for (const model::ParamInfo& p : table.params()) {
      const kernels::AdamWParams hp{1e-2f, 0.9f, 0.95f, 1e-8f, p.decay ? 0.1f : 0.0f, step};
      backends::cpu::kernels().adamw_update(expected.data() + p.offset, grads.data() + p.offset, m.data() + p.offset, v.data() + p.offset,
                   p.numel, hp, static_cast<float>(1.0 / norm));
      (p.decay ? decayed : kept) += step == 1;
    }
    EXPECT_EQ(0, std::memcmp(weights.data(), expected.data(), sizeof(float) * n)) << "after step " << step;
  }
  EXPECT_EQ(0, std::memcmp(optimizer.first_moment().host(), m.data(), sizeof(float) * n));
  EXPECT_EQ(0, std::memcmp(optimizer.second_moment().host(), v.data(), sizeof(float) * n));
  EXPECT_GT(decayed, 0);
  EXPECT_GT(kept, 0);
  EXPECT_GT(table.find("model.embed_tokens.weight")->numel, 16384);
}

}  // namespace
}  // namespace difftx::train
