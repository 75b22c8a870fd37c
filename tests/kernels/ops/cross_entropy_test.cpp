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

constexpr int32_t kIgnore = -1;

// Random targets in [0, V) with every fifth row (from row 2) ignored.
std::vector<int32_t> targets_with_ignored_rows(int64_t rows, int64_t V, Rng& rng) {
  std::vector<int32_t> t(rows);
  for (int64_t r = 0; r < rows; ++r)
    t[r] = r % 5 == 2 ? kIgnore : static_cast<int32_t>(rng.below(V));
  return t;
}

// V = 1 (loss 0), widths off the 16-lane grid, 1000 rows for the threaded path, and logits
// shifted by 1000, where a softmax that did not subtract the row max would overflow.
TEST(CrossEntropy, LossAndGradientMatchReference) {
  Rng rng(41);
  for (int64_t rows : {1, 3, 1000})
    for (int64_t V : {1, 7, 65, 130, 1001})
      for (float offset : {0.0f, 1000.0f}) {
        auto logits = random_vector(rows * V, rng, -8, 8);
        for (auto& x : logits) x += offset;
        const auto targets = targets_with_ignored_rows(rows, V, rng);
        std::vector<float> dlogits(rows * V, 7.0f);
        int64_t count = -1, count_sum = -1, count_ref = -1;
        const double loss = backends::cpu::kernels().cross_entropy_forward_backward(
            logits.data(), targets.data(), dlogits.data(), rows, V, kIgnore, &count);
        const double loss_sum =
            backends::cpu::kernels().cross_entropy_sum(logits.data(), targets.data(), rows, V, kIgnore, &count_sum);

        const auto ld = to_double(logits);
        std::vector<double> dlogits_ref(rows * V);
        const double loss_ref = reference::cross_entropy_forward_backward(
            ld.data(), targets.data(), dlogits_ref.data(), rows, V, kIgnore, &count_ref);
        const std::string where = "rows=" + std::to_string(rows) + " V=" + std::to_string(V) +
                                  " offset=" + std::to_string(offset);
        EXPECT_EQ(count, count_ref) << where;
        EXPECT_EQ(count_sum, count_ref) << where;
        EXPECT_NEAR(loss, loss_ref, 1e-5 * (1 + loss_ref)) << where;
        EXPECT_NEAR(loss_sum, loss_ref * count_ref, 1e-5 * (1 + loss_ref) * count_ref) << where;
        // dlogits are probabilities / count: compare relative to the largest possible entry.
        expect_close(dlogits, dlogits_ref, 1e-6 / std::max<int64_t>(count_ref, 1), 1e-5,
                     "dlogits " + where);
      }
}

TEST(CrossEntropy, GradientMayOverwriteTheLogits) {
  Rng rng(42);
  const int64_t rows = 6, V = 33;
  const auto logits = random_vector(rows * V, rng, -4, 4);
  const auto targets = targets_with_ignored_rows(rows, V, rng);
  std::vector<float> separate(rows * V), in_place = logits;
  int64_t count = 0;
  const double loss = backends::cpu::kernels().cross_entropy_forward_backward(logits.data(), targets.data(), separate.data(),
                                                     rows, V, kIgnore, &count);
  const double loss_in_place = backends::cpu::kernels().cross_entropy_forward_backward(
      in_place.data(), targets.data(), in_place.data(), rows, V, kIgnore, &count);
  EXPECT_EQ(loss, loss_in_place);
  EXPECT_EQ(separate, in_place);
}

TEST(CrossEntropy, AllIgnoredRowsGiveZeroLossCountAndGradient) {
  const int64_t rows = 4, V = 10;
  std::vector<float> logits(rows * V, 1.5f), dlogits(rows * V, 3.0f);
  const std::vector<int32_t> targets(rows, -100);
  int64_t count = -1;
  EXPECT_EQ(backends::cpu::kernels().cross_entropy_forward_backward(logits.data(), targets.data(), dlogits.data(), rows, V,
                                           -100, &count),
            0.0);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(dlogits, std::vector<float>(rows * V, 0.0f));
  EXPECT_EQ(backends::cpu::kernels().cross_entropy_sum(logits.data(), targets.data(), rows, V, -100, &count), 0.0);
  EXPECT_EQ(count, 0);
}

TEST(CrossEntropy, ReferenceGradientMatchesFiniteDifferences) {
  Rng rng(43);
  const int64_t rows = 4, V = 5;
  auto logits = to_double(random_vector(rows * V, rng, -3, 3));
  const std::vector<int32_t> targets = {3, kIgnore, 0, 4};
  std::vector<double> scratch(rows * V), dlogits(rows * V);
  int64_t count = 0;
  auto loss = [&] {
    return reference::cross_entropy_forward_backward(logits.data(), targets.data(), scratch.data(),
                                                     rows, V, kIgnore, &count);
  };
  reference::cross_entropy_forward_backward(logits.data(), targets.data(), dlogits.data(), rows, V,
                                            kIgnore, &count);
  EXPECT_EQ(count, 3);
  EXPECT_LT(testing::max_abs_diff(dlogits, testing::finite_difference(logits, loss)), 1e-8);
}

TEST(CrossEntropy, RejectsTargetsOutsideTheVocabularyNamingTheRow) {
  const int64_t rows = 4, V = 10;
  std::vector<float> logits(rows * V), dlogits(rows * V);
  int64_t count = 0;
  for (int32_t bad : {10, -2}) {
    const std::vector<int32_t> targets = {1, kIgnore, bad, 3};
    try {
      backends::cpu::kernels().cross_entropy_forward_backward(logits.data(), targets.data(), dlogits.data(), rows, V,
                                     kIgnore, &count);
      ADD_FAILURE() << "target " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("row 2"), std::string::npos) << e.what();
    }
    EXPECT_THROW(backends::cpu::kernels().cross_entropy_sum(logits.data(), targets.data(), rows, V, kIgnore, &count), Error);
  }
}

}  // namespace
}  // namespace difftx::kernels
