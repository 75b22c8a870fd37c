#include <gtest/gtest.h>

#include <cmath>
#include <string>
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

const AdamWParams kHyper{/*lr=*/1e-2f,          /*beta1=*/0.9f,
                         /*beta2=*/0.95f,       /*eps=*/1e-8f,
                         /*weight_decay=*/0.1f, /*step=*/1};

// Six steps with fresh gradients each, so the moments and both bias corrections evolve;
// n = 100003 runs threaded and leaves a tail after the 16-lane steps.
TEST(AdamW, MatchesDoublePrecisionLoopOverSeveralSteps) {
  Rng rng(61);
  for (int64_t n : {1, 7, 130, 100003})
    for (float grad_scale : {1.0f, 0.37f}) {
      auto p = random_vector(n, rng);
      std::vector<float> m(n, 0.0f), v(n, 0.0f);
      auto p_ref = to_double(p);
      std::vector<double> m_ref(n, 0.0), v_ref(n, 0.0);
      for (int64_t step = 1; step <= 6; ++step) {
        const auto g = random_vector(n, rng, -3, 3);
        AdamWParams hp = kHyper;
        hp.step = step;
        backends::cpu::kernels().adamw_update(p.data(), g.data(), m.data(), v.data(), n, hp, grad_scale);
        const auto g_ref = to_double(g);
        reference::adamw_update(p_ref.data(), g_ref.data(), m_ref.data(), v_ref.data(), n, hp,
                                grad_scale);
        const std::string where = "n=" + std::to_string(n) +
                                  " scale=" + std::to_string(grad_scale) +
                                  " step=" + std::to_string(step);
        expect_close(m, m_ref, 1e-6, 1e-5, "m " + where);
        expect_close(v, v_ref, 1e-6, 1e-5, "v " + where);
        expect_close(p, p_ref, 1e-6, 1e-5, "p " + where);
      }
    }
}

// Values worked out by hand. Step 1: bias correction makes m_hat = g and v_hat = g^2, so each
// parameter moves by lr * (sign(g) + wd * p). With g = 0, only the decay acts: p *= 1 - lr wd.
TEST(AdamW, FirstStepMovesBySignOfGradientPlusDecayAndZeroGradientOnlyDecays) {
  std::vector<float> p = {0.5f, -2.0f, 1.0f}, m(3, 0.0f), v(3, 0.0f);
  const std::vector<float> g = {0.3f, -4.0f, 0.0f};
  backends::cpu::kernels().adamw_update(p.data(), g.data(), m.data(), v.data(), 3, kHyper, 2.0f);
  EXPECT_NEAR(p[0], 0.5 - 0.01 * (1 + 0.1 * 0.5), 1e-7);
  EXPECT_NEAR(p[1], -2.0 - 0.01 * (-1 + 0.1 * -2.0), 1e-7);
  EXPECT_NEAR(p[2], 1.0 * (1 - 0.01 * 0.1), 1e-7);
  EXPECT_NEAR(m[0], 0.1 * 0.6, 1e-7);    // (1 - beta1) * grad_scale * g
  EXPECT_NEAR(v[1], 0.05 * 64.0, 1e-5);  // (1 - beta2) * (grad_scale * g)^2
}

TEST(AdamW, RejectsStepZero) {
  float p = 0, g = 0, m = 0, v = 0;
  AdamWParams hp = kHyper;
  hp.step = 0;
  EXPECT_THROW(backends::cpu::kernels().adamw_update(&p, &g, &m, &v, 1, hp, 1.0f), Error);
}

}  // namespace
}  // namespace difftx::kernels
