// Uncertainty of compare's numbers across seeds (docs/EXPERIMENTS.md "Several seeds"): the mean,
// sample standard deviation and a 95% confidence interval of a metric over the seeds (Student t
// with n - 1 degrees of freedom), the same for the paired difference to the baseline (same seed,
// so the seed's shared part cancels), and the Wilson score interval of an accuracy from its
// trial count (the sampling error of one evaluation).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.h"

namespace difftx::results {

struct Interval {
  double low = 0, high = 0;
};

// The 0.975 quantile of Student's t with `dof` >= 1 degrees of freedom: tabulated to 30, then
// the Cornish-Fisher expansion around the normal quantile (error below 1e-5 there).
double student_t_975(int64_t dof);

struct Summary {
  int64_t n = 0;
  double mean = 0, sd = 0;             // sd: sample standard deviation (n - 1); 0 for n = 1
  std::optional<Interval> ci95;        // mean +- t sd / sqrt(n); none for n < 2
};
// Over the finite values (NaN, a metric a run did not measure, is left out).
Summary summarize(const std::vector<double>& values);
// {"n", "mean" (null for n = 0), "sd", "ci95": [low, high] or null with "ci95_note"}.
nlohmann::json to_json(const Summary& summary);

// Wilson's score interval of `successes` out of `trials` at 95% (z = 1.959964); none for 0 trials.
std::optional<Interval> wilson_95(int64_t successes, int64_t trials);

// The metrics compared across seeds, each read from a model's results (NaN when not measured):
// final val loss, NIAH (pooled) and MQAR accuracy, attention noise, the largest attention logit
// and hidden state.
struct Metric {
  const char* name;   // results.json's key
  const char* label;  // in reports: "val loss"
  double (*of)(const ModelResults&);
};
const std::vector<Metric>& seed_metrics();

// One variant's values of a metric over its seeds, their Summary, and (for a variant other than
// the baseline, when a baseline ran) the Summary of the paired differences variant - baseline
// over the seeds both ran.
struct VariantSeeds {
  std::string variant;
  std::vector<int64_t> seeds;  // ascending
  std::vector<double> values;  // per seed (NaN: not measured)
  Summary summary;
  std::optional<Summary> paired;
  // The paired difference's interval excludes 0.
  bool outside_seed_noise() const { return paired && paired->ci95 && (paired->ci95->low > 0 || paired->ci95->high < 0); }
};
// Per variant, in the order the variants first appear in results.models.
std::vector<VariantSeeds> seed_comparison(const ExperimentResults& results, const Metric& metric);

// results.json's "statistics" (written when the compare ran several seeds): per metric and
// variant the Summary over its seeds, and per non-baseline variant the Summary of the paired
// differences to the baseline with "outside_seed_noise".
nlohmann::json seed_statistics(const ExperimentResults& results);

}  // namespace difftx::results
