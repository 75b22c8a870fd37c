// Whole-model gradient check: for every parameter tensor, the analytic gradient's component
// along a random unit direction must match a central finite difference of the loss. (The
// model runs in float32, so the step is kept large enough for rounding noise, ~1e-7 / h, to
// stay well below the tolerance.)
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/rng.h"
#include "model/decoder.h"
#include "support/backend_case.h"

namespace difftx::model {
namespace {

ModelConfig tiny_config(const std::string& attention, int64_t heads, int64_t kv_heads, int64_t grouped_ratio = 0,
                        const char* hidden_act = "silu") {
  nlohmann::json j = {{"model_type", "difftx"}, {"attention", attention}, {"vocab_size", 23},
                      {"hidden_size", 16}, {"num_hidden_layers", 2}, {"num_attention_heads", heads},
                      {"num_key_value_heads", kv_heads}, {"head_dim", 4}, {"intermediate_size", 24},
                      {"tie_word_embeddings", attention != "diff2"}};
  if (grouped_ratio > 0) j["grouped_ratio"] = grouped_ratio;
  j["hidden_act"] = hidden_act;
  return config_from_json(j, "tiny");
}

void check_gradients(const ModelConfig& config) {
  Model model(config);
  Rng rng(3);
  // Larger weights than training init, so every path carries signal.
  for (int64_t i = 0; i < model.weight_floats(); ++i) model.host_weights()[i] = static_cast<float>(0.3 * rng.normal());
  for (const auto& p : model.table.params())
    if (p.shape.size() == 1 && p.name.find("lambda_") == std::string::npos)
      for (int64_t i = 0; i < p.numel; ++i) model.host_weights()[p.offset + i] += 1.0f;

  const int64_t B = 2, T = 7;
  std::vector<int32_t> inputs(B * T), targets(B * T);
  for (auto& t : inputs) t = static_cast<int32_t>(rng.below(config.vocab_size));
  for (auto& t : targets) t = static_cast<int32_t>(rng.below(config.vocab_size));
  targets[3] = kIgnoreId;

  Activations acts(config, B, T);
  std::vector<float> grads(model.table.total_floats());
  ModelTensors g = bind_tensors(config, model.table, testing::host_ptr(grads.data()));
  decoder_forward_backward(model, acts, inputs.data(), targets.data(), g);

  auto loss = [&] {
    LossSum s = decoder_loss(model, acts, inputs.data(), targets.data());
    return s.sum / s.count;
  };
  for (const auto& p : model.table.params()) {
    std::vector<float> dir(p.numel);
    double norm = 0;
    for (auto& x : dir) {
      x = static_cast<float>(rng.normal());
      norm += static_cast<double>(x) * x;
    }
    double analytic = 0;
    for (int64_t i = 0; i < p.numel; ++i) {
      dir[i] = static_cast<float>(dir[i] / std::sqrt(norm));
      analytic += static_cast<double>(dir[i]) * grads[p.offset + i];
    }
    const float h = 1e-2f;
    float* w = model.host_weights() + p.offset;
    std::vector<float> saved(w, w + p.numel);
    for (int64_t i = 0; i < p.numel; ++i) w[i] = saved[i] + h * dir[i];
    const double up = loss();
    for (int64_t i = 0; i < p.numel; ++i) w[i] = saved[i] - h * dir[i];
    const double down = loss();
    std::copy(saved.begin(), saved.end(), w);
    const double numeric = (up - down) / (2.0 * h);
    EXPECT_NEAR(analytic, numeric, 5e-4 + 1e-2 * std::fabs(numeric))
        << kernels::attention_kind_name(config.attention) << " " << p.name;
  }
}

TEST(DecoderGradient, BaselineMatchesFiniteDifferences) { check_gradients(tiny_config("baseline", 4, 2)); }
TEST(DecoderGradient, DiffMatchesFiniteDifferences) { check_gradients(tiny_config("diff", 2, 1)); }
TEST(DecoderGradient, Diff2MatchesFiniteDifferences) { check_gradients(tiny_config("diff2", 2, 1)); }
TEST(DecoderGradient, DiffGroupedMatchesFiniteDifferences) { check_gradients(tiny_config("diff_grouped", 4, 1, 2)); }
// Motif's layer: grouped attention and the PolyNorm MLP.
TEST(DecoderGradient, PolyNormMatchesFiniteDifferences) {
  check_gradients(tiny_config("diff_grouped", 4, 2, 2, "poly_norm"));
}

}  // namespace
}  // namespace difftx::model
