// `difftx experiment sweep`: validation loss against model size and training tokens for every
// variant over seeds, power-law fits and what DIFF needs to match the baseline
// (src/experiment/sweep.h), with its report.
#include <cstdio>
#include <set>

#include "cli/experiments.h"
#include "cli/train_options.h"
#include "core/error.h"
#include "experiment/compare_defaults.h"
#include "experiment/sweep.h"
#include "report/sweep_report.h"

namespace difftx::cli {
namespace {

void print_matching(const nlohmann::json& sweep) {
  for (const char* axis : {"parameters", "tokens"}) {
    const nlohmann::json& fit = sweep["fits"][axis];
    for (const auto& [variant, m] : fit["matching"].items()) {
      const nlohmann::json& r = m["ratio"];
      if (r["mean"].is_null()) continue;
      std::printf("%-8s needs %5.1f%% of the baseline's %s to reach its loss at %.4g", variant.c_str(),
                  100 * r["mean"].get<double>(), axis, fit["at"].get<double>());
      if (r["ci95"].is_null()) std::printf(" (one seed: no interval)\n");
      else std::printf(" (95%% interval %.1f-%.1f%%, %lld seeds)\n", 100 * r["ci95"][0].get<double>(),
                       100 * r["ci95"][1].get<double>(), static_cast<long long>(r["n"].get<int64_t>()));
      if (const int64_t outside = m.value("extrapolated_seeds", int64_t{0}); outside > 0)
        std::printf("         %lld of %zu seeds match outside the measured %s (%.4g to %.4g): extrapolated\n",
                    static_cast<long long>(outside), m["per_seed"].size(), axis, fit["measured"][0].get<double>(),
                    fit["measured"][1].get<double>());
    }
  }
}

}  // namespace

int experiment_sweep(Args& args) {
  experiment::SweepOptions o;
  experiment::CompareOptions& c = o.compare;
  c.train = experiment::compare_train_defaults();
  c.train.mixture = {};  // language modelling only: the sweep measures val loss
  c.train.eval_every = 100;
  c.train.eval_batches = 32;  // the final val loss over 64K tokens: its sampling error well below the differences
  c.preset = args.get("preset", "tiny");
  if (args.get("variants")) c.variants = args.get_word_list("variants", "");
  c.seeds = args.get_int_list("seeds", "1,2,3", kAnySeed);
  DIFFTX_CHECK(std::set<int64_t>(c.seeds.begin(), c.seeds.end()).size() == c.seeds.size(),
               "experiment sweep: a seed is named twice in --seeds");
  c.data_dir = args.get("data", "data/default");
  c.out_dir = args.get("out", "runs/sweep-" + c.preset);
  c.configs_dir = args.get("configs", experiment::default_configs_dir().string());
  o.widths = args.get_int_list("widths", "32,64,128", kPositive);
  o.size_tokens = args.get_int("tokens", 500000, kPositive);
  o.budget_width = args.get_int("budget-width", o.widths.front(), kPositive);
  o.budgets = args.get_int_list("budgets", "125000,250000,500000,1000000", kPositive);
  read_train_options(args, c.train);
  args.finish();

  const nlohmann::json sweep = experiment::run_sweep(o, [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  });
  report::write_sweep_report(sweep, c.out_dir);
  std::printf("\n");
  print_matching(sweep);
  std::printf("\nreport: %s (sweep.json, sweep.svg); each point's runs: %s\n", (c.out_dir / "index.html").c_str(),
              (c.out_dir / "points").c_str());
  return 0;
}

std::string experiment_sweep_help() {
  return "  difftx experiment sweep [--preset tiny] [--widths 32,64,128] [--tokens 500000]\n"
         "                          [--budget-width W] [--budgets 125000,250000,500000,1000000]\n"
         "                          [--variants baseline,diff,diff2] [--seeds 1,2,3] [--data data/default]\n"
         "                          [--out runs/sweep-PRESET] [--configs DIR] [training options]\n"
         "      val loss against size (each width of PRESET's shape for --tokens) and against tokens\n"
         "      (--budget-width, default the first width, for each budget), every variant per seed,\n"
         "      language modelling only; power laws per seed and the parameters / tokens each variant\n"
         "      needs to reach the baseline's loss, with 95% intervals; writes OUT/sweep.json,\n"
         "      sweep.svg and index.html; run again to resume (finished runs are kept)\n";
}

}  // namespace difftx::cli
