// The whole model against the independent PyTorch oracle (tools/oracle): logits, loss, every
// gradient and the losses of five AdamW steps, for every fixture under tests/fixtures/oracle.
#include <gtest/gtest.h>
#include "source_dir.h"
#include "support/backend_case.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "io/safetensors.h"
#include "model/decoder.h"
#include "model/model_io.h"
#include "support/testing.h"
#include "train/optimizer.h"

namespace difftx::model {
namespace {

namespace fs = std::filesystem;

const fs::path kOracleFixtures = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/oracle";

// |a - b| <= atol + rtol * max|b| over the tensor: gradients are compared relative to the
// tensor's scale, since float32 accumulation error scales with it.
void expect_close(const std::string& what, const float* got, const std::vector<float>& want, double atol, double rtol) {
  double scale = 0;
  for (float w : want) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  const double err = testing::max_abs_diff(got, want.data(), static_cast<int64_t>(want.size()));
  std::printf("  %-55s max|err| %.3g (scale %.3g)\n", what.c_str(), err, scale);
  EXPECT_LE(err, atol + rtol * scale) << what;
}

class OracleFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(OracleFixture, MatchesLogitsLossGradientsAndAdamWSteps) {
  const fs::path dir = kOracleFixtures / GetParam();
  Model model = load_model_dir(dir);
  io::SafetensorsReader expected(dir / "expected.safetensors");
  const auto inputs = expected.read_i32("inputs");
  const auto targets = expected.read_i32("targets");
  const auto shape = expected.info("inputs").shape;
  ASSERT_EQ(shape.size(), 2u);
  const int64_t B = shape[0], T = shape[1], V = model.config.vocab_size;
  Activations acts(model.config, B, T);

  std::vector<float> logits(B * T * V);
  decoder_logits(model, acts, inputs.data(), logits.data());
  expect_close("logits", logits.data(), expected.read_f32("logits"), 2e-5, 2e-5);

  std::vector<float> grads(model.table.total_floats());
  ModelTensors g = bind_tensors(model.config, model.table, testing::host_ptr(grads.data()));
  const double loss = decoder_forward_backward(model, acts, inputs.data(), targets.data(), g);
  const float want_loss = expected.read_f32("loss")[0];
  std::printf("  loss %.7f vs oracle %.7f\n", loss, want_loss);
  EXPECT_NEAR(loss, want_loss, 1e-5);
  for (const ParamInfo& p : model.table.params())
    expect_close("grad." + p.name, grads.data() + p.offset, expected.read_f32("grad." + p.name), 1e-6, 2e-4);

  // Five AdamW steps on the same batch (oracle: lr 1e-2, betas (0.9, 0.95), eps 1e-8, decay
  // 0.1 on matrices only, no clipping, constant lr).
  const auto want_losses = expected.read_f32("adamw_losses");
  train::AdamW adamw(*model.backend, model.table, train::AdamWConfig{0.9, 0.95, 1e-8, 0.1, 0.0});
  std::vector<float> losses = {static_cast<float>(loss)};
  for (int step = 1; step < static_cast<int>(want_losses.size()); ++step) {
    const auto g_ptr = testing::host_ptr<const float>(grads.data());
    adamw.step(model.weights.as<float>(), g_ptr, 1e-2, adamw.gradient_norm(g_ptr));
    std::fill(grads.begin(), grads.end(), 0.0f);
    losses.push_back(static_cast<float>(decoder_forward_backward(model, acts, inputs.data(), targets.data(), g)));
  }
  expect_close("adamw_losses", losses.data(), want_losses, 1e-4, 1e-4);
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  if (fs::is_directory(kOracleFixtures))
    for (const auto& e : fs::directory_iterator(kOracleFixtures))
      if (e.is_directory() && fs::exists(e.path() / "expected.safetensors")) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Oracle, OracleFixture, ::testing::ValuesIn(fixture_names()),
                         [](const auto& info) { return info.param; });

TEST(OracleFixtures, AreAllPresent) {
  // Guards against the parametrised suite silently running zero cases.
  EXPECT_GE(fixture_names().size(), 7u) << "fixtures missing under " << kOracleFixtures;
}

}  // namespace
}  // namespace difftx::model
