// PolyNorm (kernels/polynorm.h): the float kernel against its double twin (forward, every
// gradient, threaded and not), the twin against central finite differences, and the forward
// against the formula written out for one row.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "core/rng.h"
#include "kernels/polynorm.h"
#include "ops_test_support.h"
#include "reference/polynorm_reference.h"

namespace difftx::kernels {
namespace {

using testing::expect_close;
using testing::random_vector;
using testing::to_double;

TEST(PolyNorm, ForwardAndBackwardMatchReference) {
  Rng rng(41);
  // rows * F = 70000 runs threaded; F = 1 makes every rho |z^k| itself.
  for (const auto& [rows, F] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 7}, {5, 64}, {2, 131}, {70, 1000}}) {
    const auto g = random_vector(rows * F, rng, -3, 3), u = random_vector(rows * F, rng, -2, 2);
    const auto dh = random_vector(rows * F, rng);
    const auto w = random_vector(3, rng, -1, 1), b = random_vector(1, rng, -0.5, 0.5);
    std::vector<float> h(rows * F), dg(rows * F), du(rows * F), dw = {0.5f, 0, 0}, db = {0.25f};
    polynorm_glu_forward(g.data(), u.data(), w.data(), b.data(), h.data(), rows, F);
    polynorm_glu_backward(g.data(), u.data(), w.data(), b.data(), dh.data(), dg.data(), du.data(), dw.data(), db.data(),
                          rows, F);
    const auto gd = to_double(g), ud = to_double(u), dhd = to_double(dh), wd = to_double(w), bd = to_double(b);
    std::vector<double> h_ref(rows * F), dg_ref(rows * F), du_ref(rows * F), dw_ref = {0.5, 0, 0}, db_ref = {0.25};
    reference::polynorm_glu_forward(gd.data(), ud.data(), wd.data(), bd.data(), h_ref.data(), rows, F);
    reference::polynorm_glu_backward(gd.data(), ud.data(), wd.data(), bd.data(), dhd.data(), dg_ref.data(),
                                     du_ref.data(), dw_ref.data(), db_ref.data(), rows, F);
    const std::string where = "rows=" + std::to_string(rows) + " F=" + std::to_string(F);
    expect_close(h, h_ref, 1e-5, 1e-5, "h " + where);
    expect_close(dg, dg_ref, 1e-4, 1e-4, "dg " + where);
    expect_close(du, du_ref, 1e-5, 1e-5, "du " + where);
    expect_close(dw, dw_ref, 1e-3, 1e-5, "dw (accumulated) " + where);  // sums over rows * F terms
    expect_close(db, db_ref, 1e-3, 1e-5, "db (accumulated) " + where);
  }
}

TEST(PolyNorm, ForwardIsTheFormula) {
  const std::vector<double> z = {0.5, -1.5, 2.0}, u = {1, 1, 1}, w = {0.3, -0.7, 1.1}, b = {0.2};
  std::vector<double> h(3);
  reference::polynorm_glu_forward(z.data(), u.data(), w.data(), b.data(), h.data(), 1, 3);
  // rho(z^k) = sqrt(mean(z^2k) + 1e-6), by hand.
  const double rho1 = std::sqrt((0.25 + 2.25 + 4.0) / 3 + 1e-6);
  const double rho2 = std::sqrt((0.0625 + 5.0625 + 16.0) / 3 + 1e-6);
  const double rho3 = std::sqrt((0.015625 + 11.390625 + 64.0) / 3 + 1e-6);
  for (int i = 0; i < 3; ++i) {
    const double x = z[i];
    EXPECT_NEAR(h[i], 0.3 * x * x * x / rho3 - 0.7 * x * x / rho2 + 1.1 * x / rho1 + 0.2, 1e-12) << i;
  }
}

TEST(PolyNorm, ReferenceGradientsMatchFiniteDifferences) {
  Rng rng(42);
  const int64_t rows = 2, F = 5;
  auto g = to_double(random_vector(rows * F, rng, -2, 2));
  auto u = to_double(random_vector(rows * F, rng, -2, 2));
  auto w = to_double(random_vector(3, rng, -1, 1)), b = to_double(random_vector(1, rng, -1, 1));
  const auto dh = to_double(random_vector(rows * F, rng));
  auto loss = [&] {
    std::vector<double> h(rows * F);
    reference::polynorm_glu_forward(g.data(), u.data(), w.data(), b.data(), h.data(), rows, F);
    return testing::weighted_sum(dh, h);
  };
  std::vector<double> dg(rows * F), du(rows * F), dw(3, 0.0), db(1, 0.0);
  reference::polynorm_glu_backward(g.data(), u.data(), w.data(), b.data(), dh.data(), dg.data(), du.data(), dw.data(),
                                   db.data(), rows, F);
  using Check = std::tuple<std::vector<double>*, std::vector<double>*, const char*>;
  for (const auto& [analytic, x, name] : {Check{&dg, &g, "dg"}, Check{&du, &u, "du"}, Check{&dw, &w, "dw"}, Check{&db, &b, "db"}}) {
    const auto numeric = testing::finite_difference(*x, loss);
    EXPECT_LT(testing::max_abs_diff(*analytic, numeric), 1e-7) << name;
    double largest = 0;
    for (double v : numeric) largest = std::max(largest, std::fabs(v));
    EXPECT_GT(largest, 1e-2) << name << ": gradient (nearly) zero, the check would be vacuous";
  }
}

}  // namespace
}  // namespace difftx::kernels
