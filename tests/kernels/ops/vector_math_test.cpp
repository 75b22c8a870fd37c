#include "kernels/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace difftx::kernels {
namespace {

// The copies compiled at the test's own flags: the baseline level's exp_approx, on ARM exp_vec
// and exp_neon, and in a DIFFTX_NATIVE=ON build on an AVX2 or AVX-512 machine exp_vec. The
// other levels' vector exp runs
// inside their kernels (cross-entropy, SwiGLU, attention), which the per-level runs of the
// kernel tests compare with their references (the cpu_level.* ctests).
using namespace DIFFTX_ISA;

// Each implementation of e^x, applied to a whole vector the way the kernels apply it.
struct ExpImpl {
  std::string name;
  std::vector<float> (*apply)(const std::vector<float>&);
};

std::vector<float> exp_portable(const std::vector<float>& x) {
  std::vector<float> y(x.size());
#pragma omp simd
  for (size_t i = 0; i < x.size(); ++i) y[i] = exp_approx(x[i]);
  return y;
}

#if DIFFTX_SIMD_FMA
std::vector<float> exp_vector(const std::vector<float>& x) {
  const FloatTag d;
  const size_t n = hn::Lanes(d);
  std::vector<float> padded = x, y(x.size() + n);
  padded.resize(x.size() + n);
  for (size_t i = 0; i < x.size(); i += n) hn::StoreU(exp_vec(hn::LoadU(d, &padded[i])), d, &y[i]);
  y.resize(x.size());
  return y;
}
#endif

#ifdef __ARM_NEON
std::vector<float> exp_4(const std::vector<float>& x) {
  std::vector<float> padded = x, y(x.size() + 4);
  padded.resize(x.size() + 4);
  for (size_t i = 0; i < x.size(); i += 4) vst1q_f32(&y[i], exp_neon(vld1q_f32(&padded[i])));
  y.resize(x.size());
  return y;
}
#endif

std::vector<ExpImpl> implementations() {
  std::vector<ExpImpl> impls = {{"exp_approx", exp_portable}};
#if DIFFTX_SIMD_FMA
  impls.push_back({"exp_vec", exp_vector});
#endif
#ifdef __ARM_NEON
  impls.push_back({"exp_neon", exp_4});
#endif
  return impls;
}

TEST(VectorMath, ExpIsWithinOneAndAHalfUlpOverTheNormalRange) {
  std::vector<float> x;
  for (float v = -86.5f; v < 88.72f; v += 0.00731f) x.push_back(v);
  for (const ExpImpl& impl : implementations()) {
    const auto y = impl.apply(x);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      worst = std::max(worst, std::fabs(y[i] - want) / want);
    }
    EXPECT_LT(worst, 1.5e-7) << impl.name;
  }
}

TEST(VectorMath, ExpUnderflowsToZeroOverflowsToInfinityAndKeepsNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const ExpImpl& impl : implementations()) {
    const auto y = impl.apply({-1000.0f, -87.0f, -inf, 0.0f, 89.0f, 1000.0f, inf, std::nanf("")});
    EXPECT_EQ(y[0], 0.0f) << impl.name;
    EXPECT_LE(y[1], 1.7e-38f) << impl.name;  // flushed to 0 or kept as e^-87 = 1.65e-38
    EXPECT_EQ(y[2], 0.0f) << impl.name;
    EXPECT_EQ(y[3], 1.0f) << impl.name;
    EXPECT_EQ(y[4], inf) << impl.name;
    EXPECT_EQ(y[5], inf) << impl.name;
    EXPECT_EQ(y[6], inf) << impl.name;
    EXPECT_TRUE(std::isnan(y[7])) << impl.name;
  }
}

#ifdef __ARM_NEON
TEST(VectorMath, ExpNeonHasTheBitsOfExpApprox) {
  std::vector<float> x = {-1000.0f, -86.6f, -86.5f, -3.25f, 0.0f, 1e-8f, 88.7f, 88.8f, 100.0f, std::nanf("")};
  for (float v = -90.0f; v < 90.0f; v += 0.0917f) x.push_back(v);
  const auto y = exp_4(x);
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = exp_approx(x[i]);
    EXPECT_TRUE(std::bit_cast<uint32_t>(y[i]) == std::bit_cast<uint32_t>(want) || (std::isnan(y[i]) && std::isnan(want)))
        << "x=" << x[i] << " got " << y[i] << " want " << want;
  }
}
#endif

TEST(VectorMath, SigmoidApproxSaturatesToExactlyZeroAndOne) {
  EXPECT_EQ(sigmoid_approx(-1000.0f), 0.0f);
  EXPECT_EQ(sigmoid_approx(1000.0f), 1.0f);
  EXPECT_EQ(sigmoid_approx(0.0f), 0.5f);
  EXPECT_NEAR(sigmoid_approx(2.0f), 1.0 / (1.0 + std::exp(-2.0)), 1e-7);
}

}  // namespace
}  // namespace difftx::kernels
