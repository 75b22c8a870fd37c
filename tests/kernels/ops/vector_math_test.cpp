#include "kernels/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace difftx {
namespace {

// The same loop shape the kernels use, so the vectorised code path is the one tested.
std::vector<float> exp_of(const std::vector<float>& x) {
  std::vector<float> y(x.size());
#pragma omp simd
  for (size_t i = 0; i < x.size(); ++i) y[i] = exp_approx(x[i]);
  return y;
}

TEST(VectorMath, ExpApproxIsWithinOneAndAHalfUlpOverTheNormalRange) {
  std::vector<float> x;
  for (float v = -86.5f; v < 88.72f; v += 0.00731f) x.push_back(v);
  const auto y = exp_of(x);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::fabs(y[i] - want) / want);
  }
  EXPECT_LT(worst, 1.5e-7);
}

TEST(VectorMath, ExpApproxUnderflowsToZeroOverflowsToInfinityAndKeepsNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const auto y = exp_of({-1000.0f, -87.0f, -inf, 0.0f, 89.0f, 1000.0f, inf, std::nanf("")});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[3], 1.0f);
  EXPECT_EQ(y[4], inf);
  EXPECT_EQ(y[5], inf);
  EXPECT_EQ(y[6], inf);
  EXPECT_TRUE(std::isnan(y[7]));
}

TEST(VectorMath, SigmoidApproxSaturatesToExactlyZeroAndOne) {
  EXPECT_EQ(sigmoid_approx(-1000.0f), 0.0f);
  EXPECT_EQ(sigmoid_approx(1000.0f), 1.0f);
  EXPECT_EQ(sigmoid_approx(0.0f), 0.5f);
  EXPECT_NEAR(sigmoid_approx(2.0f), 1.0 / (1.0 + std::exp(-2.0)), 1e-7);
}

}  // namespace
}  // namespace difftx
