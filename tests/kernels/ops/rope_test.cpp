#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "core/rng.h"
#include "kernels/ops.h"
#include "reference/ops_reference.h"
#include "ops_test_support.h"

namespace difftx::kernels {
namespace {

using testing::expect_close;
using testing::random_vector;
using testing::to_double;

constexpr double kTheta = 10000.0;

struct Table {
  std::vector<float> storage;
  RopeTable view;
  Table(int64_t max_T, int64_t d, double theta = kTheta)
      : storage(rope_table_floats(max_T, d)),
        view(backends::cpu::kernels().rope_table_build(storage.data(), max_T, d, theta, {})) {}
};

const char* name(RopeStyle style) {
  return style == RopeStyle::interleaved ? "interleaved" : "half";
}

// Head widths 32/64/128 (and 20, whose 10 pairs leave a tail after the 8-pair vector step),
// several heads, B > 1, pos0 > 0, and one case large enough for the threaded path.
TEST(Rope, ForwardAndBackwardMatchReference) {
  Rng rng(21);
  struct Shape {
    int64_t B, T, heads, d, pos0;
  };
  for (const Shape s : {Shape{2, 5, 3, 32, 7},
                        {3, 4, 2, 64, 1},
                        {2, 6, 3, 128, 100},
                        {2, 3, 5, 20, 9},
                        {1, 1, 1, 2, 4},
                        {2, 100, 4, 128, 3}})
    for (RopeStyle style : {RopeStyle::interleaved, RopeStyle::half}) {
      const Table table(s.pos0 + s.T + 5, s.d);
      const auto x = random_vector(s.B * s.T * s.heads * s.d, rng);
      const std::string where = std::string(name(style)) + " d=" + std::to_string(s.d) +
                                " T=" + std::to_string(s.T) + " pos0=" + std::to_string(s.pos0);
      auto fwd = x, bwd = x;
      backends::cpu::kernels().rope_forward(table.view, style, fwd.data(), s.B, s.T, s.heads, s.pos0);
      backends::cpu::kernels().rope_backward(table.view, style, bwd.data(), s.B, s.T, s.heads, s.pos0);
      auto fwd_ref = to_double(x), bwd_ref = to_double(x);
      reference::rope_forward(style, fwd_ref.data(), s.B, s.T, s.heads, s.d, s.pos0, kTheta);
      reference::rope_backward(style, bwd_ref.data(), s.B, s.T, s.heads, s.d, s.pos0, kTheta);
      // Angles up to ~110 rad: the float table's cos/sin are within ~1e-7 * angle / 2pi.
      expect_close(fwd, fwd_ref, 2e-6, 0, "forward " + where);
      expect_close(bwd, bwd_ref, 2e-6, 0, "backward " + where);
    }
}

// Backward rotates by the negative angle, so it undoes the forward; a rotation keeps the
// length of every pair (hence of every head).
TEST(Rope, BackwardInvertsForwardAndForwardPreservesNorms) {
  Rng rng(22);
  const int64_t B = 2, T = 9, heads = 3, d = 64, pos0 = 40;
  const Table table(pos0 + T, d);
  for (RopeStyle style : {RopeStyle::interleaved, RopeStyle::half}) {
    const auto x = random_vector(B * T * heads * d, rng);
    auto y = x;
    backends::cpu::kernels().rope_forward(table.view, style, y.data(), B, T, heads, pos0);
    EXPECT_GT(testing::max_abs_diff(x, y), 0.1) << name(style) << ": forward left x unrotated";
    for (int64_t head = 0; head < B * T * heads; ++head) {
      double before = 0, after = 0;
      for (int64_t j = 0; j < d; ++j) {
        before += double{x[head * d + j]} * x[head * d + j];
        after += double{y[head * d + j]} * y[head * d + j];
      }
      ASSERT_NEAR(after, before, 1e-5 * before) << name(style) << " head row " << head;
    }
    backends::cpu::kernels().rope_backward(table.view, style, y.data(), B, T, heads, pos0);
    EXPECT_LT(testing::max_abs_diff(x, y), 1e-6) << name(style);
  }
}

TEST(Rope, InterleavedAndHalfStylesPairDifferentElements) {
  Rng rng(23);
  const int64_t d = 32, pos0 = 3;
  const Table table(pos0 + 1, d);
  const auto x = random_vector(d, rng);
  auto interleaved = x, half = x;
  backends::cpu::kernels().rope_forward(table.view, RopeStyle::interleaved, interleaved.data(), 1, 1, 1, pos0);
  backends::cpu::kernels().rope_forward(table.view, RopeStyle::half, half.data(), 1, 1, 1, pos0);
  EXPECT_GT(testing::max_abs_diff(interleaved, half), 0.1);
}

// RoPE is linear in x, so d(sum w . rope(x))/dx = backends::cpu::kernels().rope_backward(w).
TEST(Rope, ReferenceGradientMatchesFiniteDifferences) {
  Rng rng(24);
  const int64_t B = 2, T = 3, heads = 2, d = 8, pos0 = 5;
  for (RopeStyle style : {RopeStyle::interleaved, RopeStyle::half}) {
    auto x = to_double(random_vector(B * T * heads * d, rng));
    const auto w = to_double(random_vector(x.size(), rng));
    auto loss = [&] {
      auto y = x;
      reference::rope_forward(style, y.data(), B, T, heads, d, pos0, kTheta);
      return testing::weighted_sum(w, y);
    };
    auto grad = w;
    reference::rope_backward(style, grad.data(), B, T, heads, d, pos0, kTheta);
    EXPECT_LT(testing::max_abs_diff(grad, testing::finite_difference(x, loss)), 1e-8)
        << name(style);
  }
}

TEST(Rope, TableHoldsTheAnglesOfSpec) {
  const int64_t d = 8;
  const double theta = 640000.0;
  const Table table(50, d, theta);
  for (int64_t t : {0, 1, 49})
    for (int64_t i = 0; i < d / 2; ++i) {
      const double angle = t * std::pow(theta, -2.0 * i / d);
      EXPECT_NEAR(table.view.cos[t * d / 2 + i], std::cos(angle), 1e-7);
      EXPECT_NEAR(table.view.sin[t * d / 2 + i], std::sin(angle), 1e-7);
    }
}

TEST(Rope, RejectsPositionsBeyondTheTableAndOddHeadWidths) {
  const Table table(10, 8);
  std::vector<float> x(8 * 4);
  EXPECT_NO_THROW(backends::cpu::kernels().rope_forward(table.view, RopeStyle::half, x.data(), 1, 4, 1, 6));
  EXPECT_THROW(backends::cpu::kernels().rope_forward(table.view, RopeStyle::half, x.data(), 1, 4, 1, 7), Error);
  EXPECT_THROW(backends::cpu::kernels().rope_backward(table.view, RopeStyle::interleaved, x.data(), 1, 4, 1, -1), Error);
  std::vector<float> storage(10 * 7);
  EXPECT_THROW(backends::cpu::kernels().rope_table_build(storage.data(), 10, 7, kTheta, {}), Error);
}

}  // namespace
}  // namespace difftx::kernels
