#include "results/statistics.h"

#include <cmath>
#include <map>
#include <string>

#include "core/error.h"

namespace difftx::results {

constexpr double kZ975 = 1.959963984540054;

nlohmann::json to_json(const Summary& s) {
  nlohmann::json j = {{"n", s.n}, {"mean", s.n ? nlohmann::json(s.mean) : nlohmann::json(nullptr)}, {"sd", s.sd}};
  if (s.ci95) j["ci95"] = {s.ci95->low, s.ci95->high};
  else j["ci95"] = nullptr, j["ci95_note"] = "fewer than 2 seeds: no interval";
  return j;
}

double student_t_975(int64_t dof) {
  DIFFTX_CHECK(dof >= 1, "student_t_975: degrees of freedom ", dof, " must be at least 1");
  static const double table[] = {12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
                                 2.262157,  2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
                                 2.109816,  2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
                                 2.059539,  2.055529, 2.051831, 2.048407, 2.045230, 2.042272};
  if (dof <= 30) return table[dof - 1];
  // Cornish-Fisher: t = z + g1/v + g2/v^2 + g3/v^3 (Abramowitz and Stegun 26.7.5).
  const double z = kZ975, v = static_cast<double>(dof), z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

Summary summarize(const std::vector<double>& values) {
  Summary s;
  double sum = 0;
  for (double v : values)
    if (std::isfinite(v)) sum += v, ++s.n;
  if (s.n == 0) return s;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) return s;
  double squares = 0;
  for (double v : values)
    if (std::isfinite(v)) squares += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(squares / static_cast<double>(s.n - 1));
  const double half = student_t_975(s.n - 1) * s.sd / std::sqrt(static_cast<double>(s.n));
  s.ci95 = Interval{s.mean - half, s.mean + half};
  return s;
}

std::optional<Interval> wilson_95(int64_t successes, int64_t trials) {
  DIFFTX_CHECK(trials >= 0 && successes >= 0 && successes <= trials, "wilson_95: ", successes, " successes of ",
               trials, " trials");
  if (trials == 0) return std::nullopt;
  const double n = static_cast<double>(trials), p = static_cast<double>(successes) / n, z2 = kZ975 * kZ975;
  const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = kZ975 * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
  return Interval{std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

const std::vector<Metric>& seed_metrics() {
  static const std::vector<Metric> metrics = {
      {"val_loss", "val loss", [](const ModelResults& m) { return m.train.final_val_loss; }},
      {"niah_accuracy", "NIAH accuracy", [](const ModelResults& m) { return m.niah ? m.niah->mean_accuracy : NAN; }},
      {"mqar_accuracy", "MQAR accuracy", [](const ModelResults& m) { return m.mqar ? m.mqar->accuracy : NAN; }},
      {"attention_noise", "attention noise", [](const ModelResults& m) { return m.attention_allocation ? m.attention_allocation->mean.noise : NAN; }},
      {"max_attention_logit", "largest |attention logit|", [](const ModelResults& m) { return m.outliers ? m.outliers->attention_logits.top1 : NAN; }},
      {"max_hidden_state", "largest |hidden state|", [](const ModelResults& m) { return m.outliers ? m.outliers->hidden_states.top1 : NAN; }},
  };
  return metrics;
}

std::vector<VariantSeeds> seed_comparison(const ExperimentResults& results, const Metric& metric) {
  std::vector<std::string> variants;  // in the order they first appear
  std::map<std::string, std::map<int64_t, const ModelResults*>> runs;  // variant -> seed -> run
  for (const ModelResults& m : results.models) {
    if (!runs.count(m.name)) variants.push_back(m.name);
    runs[m.name][m.seed] = &m;
  }
  const auto baseline = runs.find("baseline");
  std::vector<VariantSeeds> out;
  for (const std::string& v : variants) {
    VariantSeeds row;
    row.variant = v;
    std::vector<double> differences;  // same seed on both sides
    for (const auto& [seed, m] : runs[v]) {
      row.seeds.push_back(seed);
      row.values.push_back(metric.of(*m));
      if (v == "baseline" || baseline == runs.end()) continue;
      if (const auto base = baseline->second.find(seed); base != baseline->second.end())
        differences.push_back(metric.of(*m) - metric.of(*base->second));
    }
    row.summary = summarize(row.values);
    if (v != "baseline" && baseline != runs.end()) row.paired = summarize(differences);
    out.push_back(std::move(row));
  }
  return out;
}

nlohmann::json seed_statistics(const ExperimentResults& results) {
  nlohmann::json out = {{"seeds", results.setup.seeds}, {"metrics", nlohmann::json::object()},
                        {"paired_to_baseline", nlohmann::json::object()}};
  for (const Metric& metric : seed_metrics())
    for (const VariantSeeds& row : seed_comparison(results, metric)) {
      out["metrics"][metric.name][row.variant] = to_json(row.summary);
      if (!row.paired) continue;
      nlohmann::json j = to_json(*row.paired);
      j["outside_seed_noise"] = row.outside_seed_noise();
      out["paired_to_baseline"][metric.name][row.variant] = j;
    }
  return out;
}

}  // namespace difftx::results
