#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "kernels/ops.h"
#include "reference/ops_reference.h"
#include "ops_test_support.h"

namespace difftx::kernels {
namespace {

TEST(SumOfSquares, MatchesReference) {
  Rng rng(71);
  for (int64_t n : {0, 1, 7, 65, 1000003}) {
    const auto x = testing::random_vector(n, rng, -3, 3);
    const auto xd = testing::to_double(x);
    const double want = reference::sum_of_squares(xd.data(), n);
    EXPECT_NEAR(backends::cpu::kernels().sum_of_squares(x.data(), n), want, 1e-12 * (1 + want)) << "n=" << n;
  }
}

// 1e8 plus 999 ones: a float accumulator stops counting the ones (float spacing at 1e8 is
// 8), a double one is exact.
TEST(SumOfSquares, AccumulatesInDouble) {
  std::vector<float> x(1000, 1.0f);
  x[0] = 1e4f;
  EXPECT_EQ(backends::cpu::kernels().sum_of_squares(x.data(), 1000), 1e8 + 999);
}

}  // namespace
}  // namespace difftx::kernels
