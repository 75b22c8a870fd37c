// Helpers shared by the fused-op tests (tests/kernels/ops/): float/double copies and the
// comparisons the tests repeat.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/testing.h"

namespace difftx::testing {

inline std::vector<float> to_float(const std::vector<double>& x) { return {x.begin(), x.end()}; }

inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

// A fast (float) result against its reference (double): every |fast - ref| <= atol + rtol|ref|.
inline void expect_close(const std::vector<float>& fast, const std::vector<double>& ref,
                         double atol, double rtol, const std::string& what) {
  std::string mismatch;
  EXPECT_TRUE(all_close(fast, to_float(ref), atol, rtol, &mismatch)) << what << ": " << mismatch;
}

// sum_i w_i y_i: the scalar loss whose gradient with respect to y is w, used to check
// backward passes by finite differences.
inline double weighted_sum(const std::vector<double>& w, const std::vector<double>& y) {
  double sum = 0;
  for (size_t i = 0; i < y.size(); ++i) sum += w[i] * y[i];
  return sum;
}

}  // namespace difftx::testing
