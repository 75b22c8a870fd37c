#include <gtest/gtest.h>
#include <omp.h>

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

constexpr float kEps = 1e-5f;

struct RmsNormCase {
  int64_t rows, n;
  std::vector<float> x, g, dy, dg_start;
};

RmsNormCase make_case(int64_t rows, int64_t n, Rng& rng) {
  return {rows,
          n,
          random_vector(rows * n, rng, -2, 2),
          random_vector(n, rng, 0.5, 1.5),
          random_vector(rows * n, rng),
          random_vector(n, rng)};
}

// Rows 1 / 3 / 1000 and widths 1 / 7 / 64 / 65 / 130 cover vector tails, a width-1 row, and
// both backward schedules (1000 x 130 is past the threshold where threads split the work).
TEST(RmsNorm, ForwardAndBackwardMatchReference) {
  Rng rng(11);
  for (int64_t rows : {1, 3, 1000})
    for (int64_t n : {1, 7, 64, 65, 130}) {
      const auto c = make_case(rows, n, rng);
      const std::string where = "rows=" + std::to_string(rows) + " n=" + std::to_string(n);
      std::vector<float> y(rows * n), rstd(rows), dx(rows * n), dg = c.dg_start;
      backends::cpu::kernels().rmsnorm_forward(c.x.data(), c.g.data(), y.data(), rstd.data(), rows, n, kEps);
      backends::cpu::kernels().rmsnorm_backward(c.x.data(), c.g.data(), rstd.data(), c.dy.data(), dx.data(), dg.data(), rows,
                       n);

      const auto xd = to_double(c.x), gd = to_double(c.g), dyd = to_double(c.dy);
      std::vector<double> y_ref(rows * n), rstd_ref(rows), dx_ref(rows * n);
      auto dg_ref = to_double(c.dg_start);
      reference::rmsnorm_forward(xd.data(), gd.data(), y_ref.data(), rstd_ref.data(), rows, n,
                                 kEps);
      reference::rmsnorm_backward(xd.data(), gd.data(), rstd_ref.data(), dyd.data(), dx_ref.data(),
                                  dg_ref.data(), rows, n);
      expect_close(y, y_ref, 1e-6, 1e-5, "y " + where);
      expect_close(rstd, rstd_ref, 0, 1e-6, "rstd " + where);
      expect_close(dx, dx_ref, 1e-5, 1e-4, "dx " + where);
      // dg sums up to 1000 float rows: allow for that rounding.
      expect_close(dg, dg_ref, 1e-4, 1e-4, "dg " + where);
    }
}

TEST(RmsNorm, ReferenceGradientsMatchFiniteDifferences) {
  Rng rng(12);
  for (int64_t n : {1, 7}) {
    const int64_t rows = 3;
    auto x = to_double(random_vector(rows * n, rng, -2, 2));
    auto g = to_double(random_vector(n, rng, 0.5, 1.5));
    const auto w = to_double(random_vector(rows * n, rng));
    std::vector<double> y(rows * n), rstd(rows), dx(rows * n), dg(n, 0.0);
    auto loss = [&] {
      reference::rmsnorm_forward(x.data(), g.data(), y.data(), rstd.data(), rows, n, kEps);
      return testing::weighted_sum(w, y);
    };
    loss();
    reference::rmsnorm_backward(x.data(), g.data(), rstd.data(), w.data(), dx.data(), dg.data(),
                                rows, n);
    EXPECT_LT(testing::max_abs_diff(dx, testing::finite_difference(x, loss)), 1e-7) << "n=" << n;
    EXPECT_LT(testing::max_abs_diff(dg, testing::finite_difference(g, loss)), 1e-7) << "n=" << n;
  }
}

// The DIFF V1 headwise norm (docs/SPEC.md §2.2) is this op over [B*T*H, 2d] with one gain of width 2d:
// each head of each token is normalised on its own.
TEST(RmsNorm, ServesTheHeadwiseNormWithOneSharedGain) {
  Rng rng(13);
  const int64_t B = 2, T = 3, H = 4, width = 2 * 16;
  const auto h = random_vector(B * T * H * width, rng, -3, 3);
  const auto gain = random_vector(width, rng, 0.5, 1.5);
  std::vector<float> out(h.size()), rstd(B * T * H);
  backends::cpu::kernels().rmsnorm_forward(h.data(), gain.data(), out.data(), rstd.data(), B * T * H, width, kEps);
  for (int64_t token = 0; token < B * T; ++token)
    for (int64_t head = 0; head < H; ++head) {
      const int64_t at = (token * H + head) * width;
      double mean_sq = 0;
      for (int64_t j = 0; j < width; ++j) mean_sq += double{h[at + j]} * h[at + j] / width;
      for (int64_t j = 0; j < width; ++j)
        ASSERT_NEAR(out[at + j], h[at + j] / std::sqrt(mean_sq + kEps) * gain[j], 1e-5)
            << "token " << token << " head " << head;
    }
}

// Threads split the columns for dg and every column sums its rows in order, so the gain
// gradient is bitwise the same for any thread count (training runs reproduce exactly).
TEST(RmsNorm, GainGradientDoesNotDependOnThreadCount) {
  Rng rng(14);
  const auto c = make_case(700, 130, rng);
  std::vector<float> y(c.x.size()), rstd(c.rows), dx(c.x.size());
  backends::cpu::kernels().rmsnorm_forward(c.x.data(), c.g.data(), y.data(), rstd.data(), c.rows, c.n, kEps);
  const int saved = omp_get_max_threads();
  std::vector<std::vector<float>> dg_by_threads;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    auto dg = c.dg_start;
    backends::cpu::kernels().rmsnorm_backward(c.x.data(), c.g.data(), rstd.data(), c.dy.data(), dx.data(), dg.data(), c.rows,
                     c.n);
    dg_by_threads.push_back(dg);
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(dg_by_threads[0], dg_by_threads[1]);
  EXPECT_EQ(dg_by_threads[0], dg_by_threads[2]);
}

TEST(RmsNorm, RejectsAnEmptyRowWidth) {
  float x = 1, g = 1, y, rstd;
  EXPECT_THROW(backends::cpu::kernels().rmsnorm_forward(&x, &g, &y, &rstd, 1, 0, kEps), Error);
}

}  // namespace
}  // namespace difftx::kernels
