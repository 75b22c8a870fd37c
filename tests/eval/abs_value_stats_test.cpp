// Exact order statistics (eval/abs_value_stats.h) against a brute-force twin that sorts every
// |value| in double: the same top-3 and median, bit for bit, over values spread across
// accumulators (threads) and across the coarse bins, with ties, zeros, signs, denormals and
// both parities of the count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/rng.h"
#include "eval/abs_value_stats.h"
#include "support/testing.h"

namespace difftx::eval {
namespace {

// Runs both passes over `x`, split into `parts` accumulators per pass.
AbsSummary two_pass(const std::vector<float>& x, int parts) {
  AbsValueStats merged("values");
  const int64_t n = static_cast<int64_t>(x.size());
  for (int pass = 1; pass <= 2; ++pass) {
    std::vector<AbsValueStats> workers(parts, merged.worker());
    for (int p = 0; p < parts; ++p) {
      const int64_t begin = n * p / parts, end = n * (p + 1) / parts;
      workers[p].add(x.data() + begin, end - begin);
    }
    for (const auto& w : workers) merged.merge(w);
    if (pass == 1) merged.start_refinement();
  }
  return merged.summary();
}

AbsSummary brute_force(const std::vector<float>& x) {
  std::vector<double> a;
  for (float v : x) a.push_back(std::fabs(static_cast<double>(v)));
  std::sort(a.begin(), a.end(), std::greater<>());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  AbsSummary s;
  s.count = static_cast<int64_t>(a.size());
  s.top1 = a.size() > 0 ? a[0] : nan;
  s.top2 = a.size() > 1 ? a[1] : nan;
  s.top3 = a.size() > 2 ? a[2] : nan;
  std::reverse(a.begin(), a.end());
  const size_t n = a.size();
  s.median = n == 0 ? nan : (a[(n - 1) / 2] + a[n / 2]) / 2;
  return s;
}

void expect_same(const AbsSummary& got, const AbsSummary& want) {
  EXPECT_EQ(got.count, want.count);
  auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  EXPECT_TRUE(same(got.top1, want.top1)) << got.top1 << " vs " << want.top1;
  EXPECT_TRUE(same(got.top2, want.top2)) << got.top2 << " vs " << want.top2;
  EXPECT_TRUE(same(got.top3, want.top3)) << got.top3 << " vs " << want.top3;
  EXPECT_TRUE(same(got.median, want.median)) << got.median << " vs " << want.median;
}

TEST(AbsValueStats, MatchesSortingOnRandomStreams) {
  Rng rng(9);
  for (int64_t n : {0, 1, 2, 3, 4, 1000, 1001, 65536, 200001}) {
    std::vector<float> x(n);
    // Log-uniform magnitudes over 1e-6..1e4 with both signs: the values spread over many bins.
    for (auto& v : x) v = static_cast<float>((rng.uniform() < 0.5 ? -1 : 1) * std::pow(10.0, rng.uniform(-6, 4)));
    for (int parts : {1, 3}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " parts=" + std::to_string(parts));
      expect_same(two_pass(x, parts), brute_force(x));
    }
  }
}

TEST(AbsValueStats, TiesZerosDenormalsAndNeighbouringFloats) {
  Rng rng(4);
  std::vector<float> x;
  const float few[] = {0.0f, -0.0f, 1.5f, -1.5f, 2.0f, 1e-40f /* denormal */, 3.0f};
  for (int i = 0; i < 5001; ++i) x.push_back(few[rng.below(7)]);
  expect_same(two_pass(x, 2), brute_force(x));
  // The two middle values differ only in their low 16 bits (one coarse bin): pass 2 separates them.
  std::vector<float> close = {1.0f, std::nextafter(1.0f, 2.0f), std::nextafter(std::nextafter(1.0f, 2.0f), 2.0f), 7.0f};
  expect_same(two_pass(close, 1), brute_force(close));
  const AbsSummary s = two_pass(close, 2);
  EXPECT_EQ(s.median, (static_cast<double>(close[1]) + close[2]) / 2);
  EXPECT_EQ(s.top1, 7.0);
}

TEST(AbsValueStats, ErrorsNameTheProblem) {
  AbsValueStats bad("attention logits");
  const float x[] = {1.0f, std::numeric_limits<float>::infinity(), std::nanf("")};
  bad.add(x, 3);
  EXPECT_NE(testing::error_of([&] { bad.start_refinement(); }).find("attention logits: 2 of 3 values are infinite or NaN"),
            std::string::npos);

  AbsValueStats changed("hidden states");
  const float a[] = {1.0f, 2.0f, 3.0f}, b[] = {1.0f, 2.5f, 3.0f};
  changed.add(a, 3);
  changed.start_refinement();
  changed.add(b, 3);
  EXPECT_NE(testing::error_of([&] { changed.summary(); }).find("the second pass saw other values"), std::string::npos);

  AbsValueStats one_pass("values");
  one_pass.add(a, 3);
  EXPECT_NE(testing::error_of([&] { one_pass.summary(); }).find("needs both passes"), std::string::npos);
}

}  // namespace
}  // namespace difftx::eval
