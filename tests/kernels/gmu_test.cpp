// The Gated Memory Unit (kernels/gmu.h): out_proj(memory * silu(in_proj(x))) against its double
// twin with F32 and BF16 weights (the twin reads the same weights, widened), rows 1 to
// 40; accumulate adds to the output; mismatched projections are an error naming both shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernels/gmu.h"
#include "kernels/ops/ops_test_support.h"
#include "support/quant_weights.h"

namespace difftx {
namespace {

TEST(Gmu, MatchesReferenceForEveryStorageType) {
  Rng rng(71);
  for (WeightType type : {WeightType::f32, WeightType::bf16})
    for (const auto& [D, E, rows] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{32, 64, 1}, {64, 96, 9}, {96, 64, 40}}) {
      const testing::Quantized in = testing::make_weights(type, E, D, rng), out = testing::make_weights(type, D, E, rng);
      const auto x = testing::random_vector(rows * D, rng), memory = testing::random_vector(rows * E, rng, -2, 2);
      std::vector<float> gate(rows * E), got(rows * D);
      gmu_forward(in.matrix(), out.matrix(), x.data(), memory.data(), gate.data(), got.data(), rows);
      std::vector<double> want(rows * D);
      reference::gmu_forward(testing::to_double(in.dequantized).data(), testing::to_double(out.dequantized).data(), D, E,
                             testing::to_double(x).data(), testing::to_double(memory).data(), want.data(), rows);
      const std::string where = std::string(weight_type_name(type)) + " D=" + std::to_string(D) + " E=" +
                                std::to_string(E) + " rows=" + std::to_string(rows);
      testing::expect_close(got, want, 1e-5, 1e-4, where);
      std::vector<float> again(rows * D, 1.0f);  // accumulate: 1 + the same product
      gmu_forward(in.matrix(), out.matrix(), x.data(), memory.data(), gate.data(), again.data(), rows, true);
      for (double& w : want) w += 1.0;
      testing::expect_close(again, want, 1e-5, 1e-4, where + " accumulate");
    }
}

TEST(Gmu, MismatchedProjectionsAreAnError) {
  Rng rng(72);
  const testing::Quantized in = testing::make_weights(WeightType::f32, 64, 32, rng);
  const testing::Quantized out = testing::make_weights(WeightType::f32, 32, 96, rng);
  std::vector<float> x(32), memory(64), gate(64), y(32);
  const std::string message = testing::error_of(
      [&] { gmu_forward(in.matrix(), out.matrix(), x.data(), memory.data(), gate.data(), y.data(), 1); });
  EXPECT_NE(message.find("[64, 32]"), std::string::npos) << message;
  EXPECT_NE(message.find("[32, 96]"), std::string::npos) << message;
}

}  // namespace
}  // namespace difftx
