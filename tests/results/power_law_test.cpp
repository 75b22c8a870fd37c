// Power-law fits of the scaling sweep: exact on points of a power law, least squares on noisy
// ones, the matching ratio as the paper defines it, and clear errors for what cannot be fitted.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "results/power_law.h"
#include "support/testing.h"

namespace difftx::results {
namespace {

TEST(PowerLaw, RecoversAnExactLaw) {
  const std::vector<double> x = {1e5, 3e5, 1e6, 4e6};
  std::vector<double> loss;
  for (double v : x) loss.push_back(20.0 * std::pow(v, -0.12));
  const PowerLaw law = fit_power_law(x, loss);
  EXPECT_NEAR(law.a, 20.0, 1e-9);
  EXPECT_NEAR(law.b, -0.12, 1e-12);
  EXPECT_NEAR(law.at(2e6), 20.0 * std::pow(2e6, -0.12), 1e-12);
  EXPECT_NEAR(law.x_for(law.at(7e5)), 7e5, 1e-6);
}

TEST(PowerLaw, LeastSquaresOnTheLogs) {
  // Log sizes u = 0..3 and log losses y: the least-squares line through (u, y) by hand.
  const std::vector<double> x = {1, std::exp(1.0), std::exp(2.0), std::exp(3.0)};
  const std::vector<double> logs = {1.1, 0.4, 0.2, -0.5};
  std::vector<double> loss;
  for (double l : logs) loss.push_back(std::exp(l));
  const PowerLaw law = fit_power_law(x, loss);
  // slope = sum (u - 1.5)(y - 0.3) / sum (u - 1.5)^2 = (-1.2 - 0.05 - 0.05 - 1.2) / 5 = -0.5
  EXPECT_NEAR(law.b, -0.5, 1e-12);
  EXPECT_NEAR(std::log(law.a), 0.3 + 0.5 * 1.5, 1e-12);
}

TEST(PowerLaw, MatchingRatioOfTwoLaws) {
  // The variant's loss is the baseline's at 62.5% of its size: L_v(x) = L_b(x / 0.625).
  const PowerLaw base{10, -0.1}, variant{10 * std::pow(0.625, 0.1), -0.1};
  EXPECT_NEAR(matching_ratio(variant, base, 1e6), 0.625, 1e-12);
  EXPECT_NEAR(matching_ratio(base, base, 3e4), 1.0, 1e-12);
  // Different exponents: the ratio depends on where it is taken.
  const PowerLaw steeper{12, -0.12};
  EXPECT_NE(matching_ratio(steeper, base, 1e4), matching_ratio(steeper, base, 1e7));
}

TEST(PowerLaw, ClearErrors) {
  EXPECT_NE(testing::error_of([] { fit_power_law({1e5}, {3.0}); }).find("at least two points"), std::string::npos);
  EXPECT_NE(testing::error_of([] { fit_power_law({1e5, 1e5}, {3.0, 2.9}); }).find("the same size"), std::string::npos);
  EXPECT_NE(testing::error_of([] { fit_power_law({1e5, -1}, {3.0, 2.9}); }).find("point 1"), std::string::npos);
  EXPECT_NE(testing::error_of([] { fit_power_law({1e5, 2e5}, {3.0, NAN}); }).find("positive finite"), std::string::npos);
  EXPECT_NE(testing::error_of([] { fit_power_law({1e5, 2e5}, {3.0}); }).find("2 sizes for 1 losses"), std::string::npos);
  EXPECT_NE(testing::error_of([] { (void)PowerLaw{3, 0}.x_for(2); }).find("no size reaches"), std::string::npos);
}

}  // namespace
}  // namespace difftx::results
