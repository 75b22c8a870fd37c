#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "report/axis.h"

namespace difftx::report {
namespace {

void expect_ticks(const Ticks& t, const std::vector<double>& want) {
  ASSERT_EQ(t.values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.values[i], want[i], 1e-9 * std::max(1.0, std::fabs(want[i])));
  EXPECT_EQ(t.lo, t.values.front());
  EXPECT_EQ(t.hi, t.values.back());
}

std::vector<std::string> labels(const Ticks& t) {
  std::vector<std::string> out;
  for (const double v : t.values) out.push_back(tick_label(v, t));
  return out;
}

TEST(LinearTicks, RoundStepsThatCoverTheData) {
  expect_ticks(linear_ticks(0, 2e6, 5), {0, 5e5, 1e6, 1.5e6, 2e6});
  expect_ticks(linear_ticks(4.21, 5.55, 5), {4.2, 4.4, 4.6, 4.8, 5.0, 5.2, 5.4, 5.6});
  expect_ticks(linear_ticks(0.37, 0.53, 5), {0.35, 0.4, 0.45, 0.5, 0.55});
  expect_ticks(linear_ticks(0.53, 0.37, 5), {0.35, 0.4, 0.45, 0.5, 0.55});   // swapped
  expect_ticks(linear_ticks(3, 3, 5), {2.7, 2.8, 2.9, 3.0, 3.1, 3.2, 3.3});  // one value: widened by 10%
  expect_ticks(linear_ticks(0, 0, 5), {-1, -0.5, 0, 0.5, 1});
  expect_ticks(linear_ticks(2.5, 44.8, 5, true), {0, 10, 20, 30, 40, 50});  // bars start at 0
  expect_ticks(linear_ticks(0, 5, 6, false, 1), {0, 1, 2, 3, 4, 5});
  expect_ticks(linear_ticks(0, 1, 6, false, 1), {0, 1});  // layers 0 and 1: no 0.2
  EXPECT_EQ(labels(linear_ticks(0, 2e6, 5)), (std::vector<std::string>{"0", "0.5M", "1M", "1.5M", "2M"}));
  EXPECT_EQ(labels(linear_ticks(4.21, 5.55, 5))[0], "4.2");
  EXPECT_EQ(labels(linear_ticks(0.37, 0.53, 5))[1], "0.40");
  EXPECT_EQ(labels(linear_ticks(0, 60000, 4)), (std::vector<std::string>{"0", "20k", "40k", "60k"}));
  EXPECT_EQ(labels(linear_ticks(1000000, 1000400, 4)),
            (std::vector<std::string>{"1M", "1.0001M", "1.0002M", "1.0003M", "1.0004M"}));
  EXPECT_THROW(linear_ticks(0, std::numeric_limits<double>::quiet_NaN()), Error);
  EXPECT_THROW(linear_ticks(-std::numeric_limits<double>::infinity(), 1), Error);
}

TEST(LinearTicks, PropertiesOverRandomRanges) {
  Rng rng(3);
  for (int trial = 0; trial < 2000; ++trial) {
    const double scale = std::pow(10.0, rng.uniform(-6, 9));
    double lo = rng.uniform(-1, 1) * scale, hi = lo + rng.uniform(1e-3, 3) * scale;
    const Ticks t = linear_ticks(lo, hi, 5);
    ASSERT_LE(t.lo, lo);
    ASSERT_GE(t.hi, hi);
    ASSERT_GE(t.values.size(), 3u) << lo << " " << hi;
    ASSERT_LE(t.values.size(), 12u) << lo << " " << hi;
    const double step = t.values[1] - t.values[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 || std::fabs(mantissa - 5) < 1e-6)
        << "step " << step;
    for (size_t i = 1; i < t.values.size(); ++i) EXPECT_NEAR(t.values[i] - t.values[i - 1], step, 1e-6 * step);
    const auto l = labels(t);
    EXPECT_EQ(std::set<std::string>(l.begin(), l.end()).size(), l.size()) << "labels repeat for " << lo << ".." << hi;
  }
}

TEST(LogTicks, PowersOfTenWithTwoAndFiveOnShortRanges) {
  expect_ticks(log_ticks(1.2, 71.7), {1, 2, 5, 10, 20, 50, 100});
  expect_ticks(log_ticks(1.0, 1728 * 1.6), {1, 10, 100, 1000, 10000});  // four decades: powers only
  expect_ticks(log_ticks(3, 4), {1, 2, 5, 10});
  EXPECT_EQ(labels(log_ticks(0.01, 0.5)), (std::vector<std::string>{"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"}));
  EXPECT_EQ(labels(log_ticks(1, 2e6)),
            (std::vector<std::string>{"1", "10", "100", "1000", "10000", "1e5", "1e6", "1e7"}));
  EXPECT_THROW(log_ticks(0, 10), Error);
  EXPECT_THROW(log_ticks(-1, 10), Error);
}

TEST(Scale, MapsTheDomainOntoPixels) {
  const Scale linear{linear_ticks(0, 10, 5), 100, 300};
  EXPECT_DOUBLE_EQ(linear(0), 100);
  EXPECT_DOUBLE_EQ(linear(5), 200);
  EXPECT_DOUBLE_EQ(linear(10), 300);
  const Scale flipped{linear_ticks(0, 10, 5), 300, 100};  // y grows downwards in SVG
  EXPECT_DOUBLE_EQ(flipped(10), 100);
  const Scale log{log_ticks(1, 100), 0, 200};
  EXPECT_DOUBLE_EQ(log(10), 100);
  EXPECT_THROW(log(0), Error);
}

}  // namespace
}  // namespace difftx::report
