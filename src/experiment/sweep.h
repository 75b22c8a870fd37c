// `difftx experiment sweep`: the paper's scaling comparison (Figure 3) at CPU scale. Validation
// loss against model size (several widths of one preset's shape, equal training tokens) and
// against training tokens (one width, several budgets), for every variant and seed; power laws
// L = a x^b fitted per variant and seed (results/power_law.h), and how many non-embedding
// parameters / tokens each variant needs to reach the baseline's loss at the largest point,
// with a 95% interval over the seeds.
//
// Each point (width, tokens) is a compare (compare.h) without the analyses, in
// OUT/points/w<width>_t<tokens>/, so a stopped sweep started again with the same arguments keeps
// every finished run and resumes the rest; more seeds, widths or budgets can be added later.
// The widths' configs are written to OUT/configs/w<width>/<variant>.json, scaled from the
// preset's: hidden size, heads, kv heads and FFN width in proportion, head dim and depth kept.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiment/compare.h"

namespace difftx::experiment {

struct SweepOptions {
  CompareOptions compare;          // the template preset, variants, seeds, data, training; out_dir: the sweep's
  std::vector<int64_t> widths;     // the size axis: hidden sizes, each trained for size_tokens
  int64_t size_tokens = 0;
  int64_t budget_width = 0;        // the token axis: this hidden size trained for each budget
  std::vector<int64_t> budgets;
};

// The preset's variant config scaled to hidden size `width` (see above); errors when the heads
// or kv heads do not scale to whole numbers.
nlohmann::json scaled_config(const nlohmann::json& preset_config, int64_t width, const std::string& where);

// Runs (or resumes) every point, then writes OUT/sweep.json (points, fits, matching ratios) and
// returns it. Errors before any training: no widths or budgets, fewer than two sizes on an
// axis, a width that does not scale, configs under OUT/configs from other options.
nlohmann::json run_sweep(const SweepOptions& options, const std::function<void(const std::string&)>& log);

// sweep.json's "fits" from its "setup" and "points" (exposed for tests): per axis and variant the
// power law of each seed and their exponents' Summary, and per variant but the baseline the
// matching ratio at the axis's largest baseline point per seed (flagged "extrapolated" when the
// matching size lies outside the measured ones) and their geometric mean with a 95% interval.
nlohmann::json sweep_fits(const nlohmann::json& sweep);

}  // namespace difftx::experiment
