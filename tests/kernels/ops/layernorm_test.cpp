// LayerNorm with a bias (kernels/layernorm.h): the float kernel against its double twin (forward,
// every gradient, threaded and not, on awkward widths), the twin against central finite
// differences, and the forward against a row worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "ops_test_support.h"
#include "reference/layernorm_reference.h"
#include "support/level_kernels.h"

namespace difftx::kernels {
namespace {

using testing::expect_close;
using testing::random_vector;
using testing::to_double;

TEST(LayerNorm, ForwardAndBackwardMatchReference) {
  Rng rng(51);
  // rows * n = 100000 runs threaded; n = 1 makes every normalised value 0 (x - mean = 0).
  for (const auto& [rows, n] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 7}, {5, 64}, {2, 131}, {100, 1000}}) {
    const auto x = random_vector(rows * n, rng, -3, 5), dy = random_vector(rows * n, rng);
    const auto w = random_vector(n, rng, 0.5, 1.5), b = random_vector(n, rng, -0.5, 0.5);
    std::vector<float> y(rows * n), mean(rows), rstd(rows), dx(rows * n), dw(n, 0.25f), db(n, -0.5f);
    cpu().layernorm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), rows, n, 1e-5f);
    cpu().layernorm_backward(x.data(), w.data(), mean.data(), rstd.data(), dy.data(), dx.data(), dw.data(), db.data(),
                             rows, n);
    const auto xd = to_double(x), wd = to_double(w), bd = to_double(b), dyd = to_double(dy);
    std::vector<double> y_ref(rows * n), mean_ref(rows), rstd_ref(rows), dx_ref(rows * n), dw_ref(n, 0.25),
        db_ref(n, -0.5);
    reference::layernorm_forward(xd.data(), wd.data(), bd.data(), y_ref.data(), mean_ref.data(), rstd_ref.data(), rows,
                                 n, 1e-5);
    reference::layernorm_backward(xd.data(), wd.data(), mean_ref.data(), rstd_ref.data(), dyd.data(), dx_ref.data(),
                                  dw_ref.data(), db_ref.data(), rows, n);
    const std::string where = "rows=" + std::to_string(rows) + " n=" + std::to_string(n);
    expect_close(y, y_ref, 1e-5, 1e-5, "y " + where);
    expect_close(mean, mean_ref, 1e-6, 1e-5, "mean " + where);
    expect_close(rstd, rstd_ref, 1e-6, 1e-5, "rstd " + where);
    expect_close(dx, dx_ref, 1e-4, 1e-4, "dx " + where);
    expect_close(dw, dw_ref, 1e-4, 1e-5, "dw (accumulated) " + where);
    expect_close(db, db_ref, 1e-4, 1e-5, "db (accumulated) " + where);
  }
}

TEST(LayerNorm, ForwardIsTheFormula) {
  const std::vector<double> x = {1, 2, 3, 6}, w = {2, 1, 0.5, -1}, b = {0.5, 0, -0.25, 1};
  std::vector<double> y(4), mean(1), rstd(1);
  reference::layernorm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), 1, 4, 0.5);
  // mean 3, variance (4 + 1 + 0 + 9) / 4 = 3.5, rstd 1 / sqrt(3.5 + 0.5) = 0.5
  EXPECT_EQ(mean[0], 3.0);
  EXPECT_NEAR(rstd[0], 0.5, 1e-15);
  const double want[] = {-2 * 0.5 * 2 + 0.5, -1 * 0.5 * 1, 0 - 0.25, 3 * 0.5 * -1 + 1};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], want[i], 1e-15) << i;
  std::vector<float> yf(4), meanf(1), rstdf(1);
  const std::vector<float> xf(x.begin(), x.end()), wf(w.begin(), w.end()), bf(b.begin(), b.end());
  cpu().layernorm_forward(xf.data(), wf.data(), bf.data(), yf.data(), meanf.data(), rstdf.data(), 1, 4, 0.5f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(yf[i], want[i], 1e-6) << i;
}

TEST(LayerNorm, ReferenceGradientsMatchFiniteDifferences) {
  Rng rng(52);
  const int64_t rows = 3, n = 6;
  auto x = to_double(random_vector(rows * n, rng, -2, 2));
  auto w = to_double(random_vector(n, rng, 0.5, 1.5)), b = to_double(random_vector(n, rng, -1, 1));
  const auto dy = to_double(random_vector(rows * n, rng));
  auto loss = [&] {
    std::vector<double> y(rows * n), mean(rows), rstd(rows);
    reference::layernorm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), rows, n, 1e-5);
    return testing::weighted_sum(dy, y);
  };
  std::vector<double> y(rows * n), mean(rows), rstd(rows), dx(rows * n), dw(n, 0.0), db(n, 0.0);
  reference::layernorm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), rows, n, 1e-5);
  reference::layernorm_backward(x.data(), w.data(), mean.data(), rstd.data(), dy.data(), dx.data(), dw.data(),
                                db.data(), rows, n);
  using Check = std::tuple<std::vector<double>*, std::vector<double>*, const char*>;
  for (const auto& [analytic, param, name] : {Check{&dx, &x, "dx"}, Check{&dw, &w, "dw"}, Check{&db, &b, "db"}}) {
    const auto numeric = testing::finite_difference(*param, loss);
    EXPECT_LT(testing::max_abs_diff(*analytic, numeric), 1e-7) << name;
    double largest = 0;
    for (double v : numeric) largest = std::max(largest, std::fabs(v));
    EXPECT_GT(largest, 1e-2) << name << ": gradient (nearly) zero, the check would be vacuous";
  }
}

TEST(LayerNorm, BadShapesAreClearErrors) {
  float x = 0, w = 1, b = 0, y, m, r;
  EXPECT_NE(testing::error_of([&] { cpu().layernorm_forward(&x, &w, &b, &y, &m, &r, 1, 0, 1e-5f); }).find("row width"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { cpu().layernorm_forward(&x, &w, &b, &y, &m, &r, 1, 1, -1.0f); }).find("eps"),
            std::string::npos);
}

}  // namespace
}  // namespace difftx::kernels
