// Statistics over seeds (results/statistics.h) against values worked out independently: Student
// t quantiles from the standard table, a Wilson interval and a t interval by hand, and the
// "statistics" section of a results.json with three seeds.
#include <gtest/gtest.h>

#include <cmath>

#include "results/statistics.h"
#include "support/testing.h"

namespace difftx::results {
namespace {

TEST(Statistics, StudentQuantilesMatchTheTable) {
  EXPECT_NEAR(student_t_975(1), 12.706205, 1e-6);
  EXPECT_NEAR(student_t_975(2), 4.302653, 1e-6);
  EXPECT_NEAR(student_t_975(4), 2.776445, 1e-6);
  EXPECT_NEAR(student_t_975(30), 2.042272, 1e-6);
  // Past the table: the expansion against tabulated 40, 60 and 120 degrees of freedom.
  EXPECT_NEAR(student_t_975(40), 2.021075, 2e-5);
  EXPECT_NEAR(student_t_975(60), 2.000298, 1e-5);
  EXPECT_NEAR(student_t_975(120), 1.979930, 1e-5);
  EXPECT_NE(testing::error_of([] { student_t_975(0); }).find("at least 1"), std::string::npos);
}

TEST(Statistics, SummaryIsMeanSampleSdAndTInterval) {
  // 1, 2, 3, 4: mean 2.5, sd sqrt(5/3), half-width t(3) sd / 2 = 2.054260.
  const Summary s = summarize({1, 2, 3, NAN, 4});  // NaN: not measured, left out
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.sd, 1.2909944, 1e-7);
  ASSERT_TRUE(s.ci95.has_value());
  EXPECT_NEAR(s.ci95->low, 0.445740, 1e-6);
  EXPECT_NEAR(s.ci95->high, 4.554260, 1e-6);
  const Summary one = summarize({7});
  EXPECT_EQ(one.n, 1);
  EXPECT_FALSE(one.ci95.has_value());
  EXPECT_EQ(summarize({}).n, 0);
}

TEST(Statistics, WilsonIntervalOfEightOutOfTen) {
  // p = 0.8, n = 10, z = 1.959964: centre 0.716743, half-width 0.226578 (worked by hand).
  const auto ci = wilson_95(8, 10);
  ASSERT_TRUE(ci.has_value());
  EXPECT_NEAR(ci->low, 0.490165, 1e-5);
  EXPECT_NEAR(ci->high, 0.943321, 1e-5);
  EXPECT_NEAR(wilson_95(0, 20)->low, 0.0, 1e-12);  // never below 0 or above 1
  EXPECT_NEAR(wilson_95(20, 20)->high, 1.0, 1e-12);
  EXPECT_FALSE(wilson_95(0, 0).has_value());
  EXPECT_NE(testing::error_of([] { wilson_95(3, 2); }).find("3 successes of 2 trials"), std::string::npos);
}

ModelResults run(const std::string& name, int64_t seed, double val_loss) {
  ModelResults m;
  m.name = name;
  m.seed = seed;
  m.train.final_val_loss = val_loss;
  return m;
}

TEST(Statistics, SeedStatisticsPairDifferencesBySeed) {
  ExperimentResults r;
  r.setup.seeds = {1, 2, 3};
  // diff is 0.10 +- 0.01 below the baseline on every seed, while the seeds themselves spread by
  // 0.5: paired, the difference is outside the noise; unpaired it would not be.
  for (int64_t seed : {1, 2, 3}) {
    const double base = 5.0 + 0.5 * static_cast<double>(seed);
    r.models.push_back(run("baseline", seed, base));
    r.models.push_back(run("diff", seed, base - 0.10 + 0.01 * static_cast<double>(seed - 2)));
    r.models.push_back(run("diff2", seed, base + (seed == 2 ? 0.3 : -0.3)));
  }
  const nlohmann::json s = seed_statistics(r);
  EXPECT_EQ(s["seeds"], nlohmann::json({1, 2, 3}));
  EXPECT_NEAR(s["metrics"]["val_loss"]["baseline"]["mean"].get<double>(), 6.0, 1e-12);
  EXPECT_EQ(s["metrics"]["val_loss"]["diff"]["n"], 3);
  const nlohmann::json& d = s["paired_to_baseline"]["val_loss"]["diff"];
  EXPECT_NEAR(d["mean"].get<double>(), -0.10, 1e-12);
  // sd of (-0.11, -0.10, -0.09) is 0.01; half-width t(2) 0.01 / sqrt(3) = 0.024841.
  EXPECT_NEAR(d["ci95"][1].get<double>() - d["mean"].get<double>(), 0.024841, 1e-6);
  EXPECT_TRUE(d["outside_seed_noise"].get<bool>());
  EXPECT_FALSE(s["paired_to_baseline"]["val_loss"]["diff2"]["outside_seed_noise"].get<bool>());
  // Metrics no run measured: no mean, no interval.
  EXPECT_TRUE(s["metrics"]["niah_accuracy"]["diff"]["mean"].is_null());
  EXPECT_TRUE(to_json(r).contains("statistics"));
  r.setup.seeds = {};
  EXPECT_FALSE(to_json(r).contains("statistics"));
}

}  // namespace
}  // namespace difftx::results
