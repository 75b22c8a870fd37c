// docs/SPEC.md §2.4: the tutorial's worked example ("The cat sat on mat", seed 004) reproduced to the
// 4 decimals the tutorial prints.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "reference/diff_clamp_reference.h"

namespace difftx::kernels {
namespace {

TEST(DiffClampAttention, ReproducesTheTutorialWorkedExample) {
  // Q, K, V of the tutorial (5 tokens, d_k = 4 split into halves of 2; V not split).
  const std::vector<float> q = {1, 0, 1, 0, 0, 2, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1};
  const std::vector<float> k = {0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0.5, 0.5};
  const std::vector<float> v = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0.5, 0.5, 0.5, 0.5};
  const float expected[5][4] = {{0.2626f, 0.3830f, 0.4746f, 0.1710f},   // The
                                {0.4269f, 0.0679f, 0.5156f, 0.0104f},   // cat
                                {0.2909f, 0.2021f, 0.5917f, 0.0848f},   // sat
                                {0.3189f, 0.3189f, 0.3801f, 0.1947f},   // on
                                {0.1710f, 0.4746f, 0.4746f, 0.1710f}};  // mat
  std::vector<float> out(20);
  diff_clamp_attention_reference(5, 2, 4, q.data(), k.data(), v.data(), 0.4f, /*causal=*/false, out.data());
  for (int t = 0; t < 5; ++t)
    for (int x = 0; x < 4; ++x) EXPECT_NEAR(out[t * 4 + x], expected[t][x], 5e-5) << "row " << t << " col " << x;
}

// With lambda = 1 and identical maps (q1 = q2, k1 = k2) every difference is zero: rows stay zero
// instead of dividing by zero. The causal mask limits token 0 to itself.
TEST(DiffClampAttention, AllZeroRowsStayZeroAndCausalMaskApplies) {
  const std::vector<float> q = {1, 2, 1, 2, -1, 0, -1, 0, 0.5, 1, 0.5, 1};
  const std::vector<float> k = {0, 1, 0, 1, 2, 0, 2, 0, 1, 1, 1, 1};
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  std::vector<float> out(6, -1.0f);
  diff_clamp_attention_reference(3, 2, 2, q.data(), k.data(), v.data(), 1.0f, true, out.data());
  for (float x : out) EXPECT_EQ(x, 0.0f);
  diff_clamp_attention_reference(3, 2, 2, q.data(), k.data(), v.data(), 0.0f, true, out.data());
  EXPECT_FLOAT_EQ(out[0], 1.0f);  // token 0 sees only itself
  EXPECT_FLOAT_EQ(out[1], 2.0f);
}

TEST(DiffClampAttention, RejectsBadSizesNamingThem) {
  std::vector<float> x(8);
  try {
    diff_clamp_attention_reference(2, 0, 2, x.data(), x.data(), x.data(), 0.5f, false, x.data());
    FAIL() << "expected difftx::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("d (half of the q/k width)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace difftx::kernels
