#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "kernels/ops.h"
#include "reference/ops_reference.h"
#include "ops_test_support.h"

namespace difftx::kernels {
namespace {

using testing::expect_close;
using testing::random_vector;
using testing::to_double;

// Gate values over [-12, 12] reach deep into sigmoid's saturation; n = 100003 runs threaded.
TEST(Swiglu, ForwardAndBackwardMatchReference) {
  Rng rng(31);
  for (int64_t n : {1, 7, 64, 65, 130, 100003}) {
    auto g = random_vector(n, rng, -12, 12);
    if (n >= 4) g[0] = -1000, g[1] = 1000, g[2] = -90, g[3] = 0;  // saturated and exact cases
    const auto u = random_vector(n, rng, -2, 2), dh = random_vector(n, rng);
    std::vector<float> h(n), dg(n), du(n);
    backends::cpu::kernels().swiglu_forward(g.data(), u.data(), h.data(), n);
    backends::cpu::kernels().swiglu_backward(g.data(), u.data(), dh.data(), dg.data(), du.data(), n);

    const auto gd = to_double(g), ud = to_double(u), dhd = to_double(dh);
    std::vector<double> h_ref(n), dg_ref(n), du_ref(n);
    reference::swiglu_forward(gd.data(), ud.data(), h_ref.data(), n);
    reference::swiglu_backward(gd.data(), ud.data(), dhd.data(), dg_ref.data(), du_ref.data(), n);
    const std::string where = "n=" + std::to_string(n);
    expect_close(h, h_ref, 1e-6, 1e-6, "h " + where);
    expect_close(dg, dg_ref, 1e-6, 1e-6, "dg " + where);
    expect_close(du, du_ref, 1e-6, 1e-6, "du " + where);
  }
}

TEST(Swiglu, ReferenceGradientsMatchFiniteDifferences) {
  Rng rng(32);
  const int64_t n = 9;
  auto g = to_double(random_vector(n, rng, -6, 6));
  auto u = to_double(random_vector(n, rng, -2, 2));
  const auto w = to_double(random_vector(n, rng));
  std::vector<double> h(n), dg(n), du(n);
  auto loss = [&] {
    reference::swiglu_forward(g.data(), u.data(), h.data(), n);
    return testing::weighted_sum(w, h);
  };
  reference::swiglu_backward(g.data(), u.data(), w.data(), dg.data(), du.data(), n);
  EXPECT_LT(testing::max_abs_diff(dg, testing::finite_difference(g, loss)), 1e-8);
  EXPECT_LT(testing::max_abs_diff(du, testing::finite_difference(u, loss)), 1e-8);
}

}  // namespace
}  // namespace difftx::kernels
