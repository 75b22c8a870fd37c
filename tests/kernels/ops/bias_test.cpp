// The bias of a biased projection (kernels/bias.h) against its double twin and by hand.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "ops_test_support.h"
#include "reference/bias_reference.h"
#include "support/level_kernels.h"

namespace difftx::kernels {
namespace {

TEST(AddBias, MatchesReferenceOnAwkwardShapes) {
  Rng rng(61);
  for (const auto& [rows, cols] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 1}, {3, 7}, {17, 33}, {70, 1001}}) {
    auto y = testing::random_vector(rows * cols, rng);
    const auto bias = testing::random_vector(cols, rng);
    auto want = testing::to_double(y);
    reference::add_bias(want.data(), testing::to_double(bias).data(), rows, cols);
    cpu().add_bias(y.data(), bias.data(), rows, cols);
    testing::expect_close(y, want, 1e-7, 1e-7, "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols));
  }
}

TEST(AddBias, AddsTheBiasToEveryRow) {
  std::vector<float> y = {1, 2, 3, 4, 5, 6};
  const std::vector<float> bias = {10, 20, 30};
  cpu().add_bias(y.data(), bias.data(), 2, 3);
  EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_NE(testing::error_of([&] { cpu().add_bias(y.data(), bias.data(), 1, 0); }).find("cols"), std::string::npos);
}

}  // namespace
}  // namespace difftx::kernels
