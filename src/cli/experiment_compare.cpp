// `difftx experiment compare`: trains baseline, DIFF V1 and DIFF V2 at equal parameters and
// tokens, runs the paper's analyses on each and writes the report (src/experiment/compare.h).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "cli/analyze_targets.h"
#include "cli/experiments.h"
#include "cli/train_options.h"
#include "core/error.h"
#include "experiment/compare.h"
#include "experiment/compare_defaults.h"
#include "results/statistics.h"

namespace difftx::cli {
namespace {

namespace fs = std::filesystem;

std::vector<int64_t> or_default(Args& args, const std::string& name, const std::vector<int64_t>& fallback,
                                IntRange range) {
  return args.get(name) ? args.get_int_list(name, "", range) : fallback;
}

// A number, or "-" where it is missing (NaN).
std::string cell(double value, const char* pattern) {
  if (std::isnan(value)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

// mean +- half of the 95% interval (or the single value) of a metric over a variant's seeds.
std::string mean_cell(const nlohmann::json& summary, const char* pattern, const char* half_pattern) {
  if (summary["mean"].is_null()) return "-";
  std::string out = cell(summary["mean"].get<double>(), pattern);
  if (!summary["ci95"].is_null())
    out += " +- " + cell((summary["ci95"][1].get<double>() - summary["ci95"][0].get<double>()) / 2, half_pattern);
  return out;
}

// With several seeds: per variant the mean and interval of each metric, then each variant's
// paired difference to the baseline and whether it is outside the seed noise.
void print_seed_table(const results::ExperimentResults& results) {
  const nlohmann::json stats = results::seed_statistics(results);
  std::printf("\nover %zu seeds (mean +- half of the 95%% interval):\n%-14s %20s %18s %18s %16s\n",
              results.setup.seeds.size(), "model", "val loss", "NIAH", "MQAR", "max |logit|");
  const nlohmann::json& m = stats["metrics"];
  for (const auto& [variant, summary] : m["val_loss"].items())
    std::printf("%-14s %20s %18s %18s %16s\n", variant.c_str(), mean_cell(summary, "%.4f", "%.4f").c_str(),
                mean_cell(m["niah_accuracy"][variant], "%.3f", "%.3f").c_str(),
                mean_cell(m["mqar_accuracy"][variant], "%.3f", "%.3f").c_str(),
                mean_cell(m["max_attention_logit"][variant], "%.1f", "%.1f").c_str());
  for (const auto& [metric, variants] : stats["paired_to_baseline"].items())
    for (const auto& [variant, d] : variants.items()) {
      if (d["mean"].is_null()) continue;
      std::printf("%s - baseline, %s: %s (%s)\n", variant.c_str(), metric.c_str(), mean_cell(d, "%+.4f", "%.4f").c_str(),
                  d["ci95"].is_null() ? "one seed: no interval"
                  : d["outside_seed_noise"].get<bool>() ? "outside the seed noise" : "within the seed noise");
    }
}

// The comparison table: one line per model.
void print_table(const results::ExperimentResults& results) {
  std::printf("\n%-14s %8s %9s %9s %8s %8s %13s %12s\n", "model", "params", "tok/s", "val loss", "NIAH", "MQAR",
              "max |logit|", "4-bit dloss");
  for (const results::ModelResults& m : results.models) {
    double plain = NAN, four = NAN;  // the 4-bit point's val loss over the unquantized one's
    for (const results::QuantizationPoint& p : m.quantization) {
      if (p.bits == 0) plain = p.val_loss;
      if (p.bits == 4) four = p.val_loss;
    }
    const std::string name = results.setup.seeds.size() > 1 ? m.name + "/" + std::to_string(m.seed) : m.name;
    std::printf("%-14s %7.2fM %9s %9s %8s %8s %13s %+12.4f\n", name.c_str(), static_cast<double>(m.parameters) / 1e6,
                cell(m.train.tokens_per_second, "%.0f").c_str(), cell(m.train.final_val_loss, "%.4f").c_str(),
                cell(m.niah ? m.niah->mean_accuracy : NAN, "%.3f").c_str(),
                cell(m.mqar ? m.mqar->accuracy : NAN, "%.3f").c_str(),
                cell(m.outliers ? m.outliers->attention_logits.top1 : NAN, "%.1f").c_str(), four - plain);
  }
}

// 1,2,3: a list as the list options spell it.
std::string int_list(const std::vector<int>& values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

std::string indented(const std::string& lines, const std::string& margin) {
  std::string out;
  size_t begin = 0;
  while (begin < lines.size()) {
    const size_t end = lines.find('\n', begin);
    out += margin + lines.substr(begin, end - begin) + "\n";
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return out;
}

}  // namespace

int experiment_compare(Args& args) {
  experiment::CompareOptions o = experiment::compare_defaults();
  experiment::AnalysisOptions& a = o.analysis;
  int64_t default_tokens = 0;  // none: --tokens is required
  if (const auto recipe = args.get("recipe")) {
    DIFFTX_CHECK(*recipe == "niah", "experiment compare: unknown --recipe '", *recipe, "' (known: niah)");
    default_tokens = experiment::apply_niah_recipe(o, args.get_int("seq-len", 128, kSequenceLength));
  }
  o.preset = args.get("preset", o.preset);
  o.tokens = args.get_int("tokens", default_tokens, kNonNegative);
  DIFFTX_CHECK(o.tokens > 0, "experiment compare: --tokens N (training tokens per model) is required and must be positive");
  if (args.get("variants")) o.variants = args.get_word_list("variants", "");
  o.data_dir = args.get("data", "data/default");
  o.out_dir = args.get("out", "runs/compare-" + o.preset);
  o.configs_dir = args.get("configs", experiment::default_configs_dir().string());
  read_train_options(args, o.train);
  if (args.get("seeds")) o.seeds = args.get_int_list("seeds", "", kAnySeed);
  if (args.get("init-from")) o.init_from = args.require("init-from");  // given: a non-empty path
  DIFFTX_CHECK(std::set<int64_t>(o.seeds.begin(), o.seeds.end()).size() == o.seeds.size(),
               "experiment compare: a seed is named twice in --seeds");

  a.niah.contexts = or_default(args, "niah-contexts", a.niah.contexts, kSequenceLength);
  a.niah.needles = or_default(args, "niah-needles", a.niah.needles, kPositive);
  a.niah.queried = or_default(args, "niah-queried", a.niah.queried, kPositive);
  if (args.get("niah-depths")) a.niah.depths = args.get_double_list("niah-depths", "", kFraction);
  a.niah.samples = args.get_int("niah-samples", a.niah.samples, kPositive);
  a.mqar.spec.pairs = args.get_int("mqar-pairs", a.mqar.spec.pairs, kPositive);
  a.mqar.spec.queries = args.get_int("mqar-queries", a.mqar.spec.pairs, kPositive);
  a.mqar.samples = args.get_int("mqar-samples", a.mqar.samples, kPositive);
  a.prompts.per_depth = args.get_int("attention-prompts", a.prompts.per_depth, kPositive);
  a.outliers.tokens = args.get_int("outlier-tokens", a.outliers.tokens, kPositive);
  a.bits = logit_bits_option(args, "bits", int_list(a.bits));  // checked now, not after the models have trained
  a.quant_val_batches = args.get_int("quant-batches", a.quant_val_batches, kNonNegative);
  experiment::derive_analysis_options(o);
  args.finish();

  const results::ExperimentResults results = experiment::run_compare(o, [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  });
  print_table(results);
  if (results.setup.seeds.size() > 1) print_seed_table(results);
  std::printf("\nreport: %s (results.json, charts); checkpoints: %s\n", (o.out_dir / "index.html").c_str(),
              (o.out_dir / "runs" / "<model>" / "checkpoints").c_str());
  return 0;
}

std::string experiment_compare_help() {
  return "  difftx experiment compare --tokens N [--preset small] [--variants baseline,diff,diff2]\n"
         "                            [--data data/default] [--out runs/compare-PRESET] [--configs DIR]\n"
         "                            [--seeds 1,2,3] [--recipe niah] [--init-from COMPARE_DIR]\n"
         "      trains each variant of configs/PRESET for N tokens on the same data with the same seed\n"
         "      (--seeds: once per seed, with means, 95% intervals and paired differences to the baseline),\n"
         "      runs NIAH, MQAR, attention allocation, outliers and the quantization sweep on each, and\n"
         "      writes OUT/results.json, the charts and OUT/index.html; run again to resume\n"
         "    --recipe niah: defaults of the answer-only NIAH recipe (docs/EXPERIMENTS.md) at the context\n"
         "      --seq-len names (default 128): preset retrieval, --mix niah=0.5,mqar=0.2, --lr 2e-3\n"
         "      --warmup 50 --schedule constant, 2048 tokens a step, 3000 steps, --niah-contexts SEQ_LEN\n"
         "      --niah-needles 1,2 --niah-queried 1 --niah-depths 0,0.5,1 --niah-samples 20\n"
         "      --quant-batches 16; any flag given overrides its value\n"
         "    --init-from COMPARE_DIR: each run starts from the last checkpoint of the same variant and\n"
         "      seed in that earlier compare (a second stage, e.g. at a longer --seq-len), fresh optimizer\n"
         "    analysis options: --niah-contexts 256 --niah-needles 1,2,4 --niah-queried 1,2\n"
         "      --niah-depths 0,0.25,0.5,0.75,1 --niah-samples 10 --mqar-pairs 8 --mqar-queries P\n"
         "      --mqar-samples 100 --attention-prompts 4 (per depth) --outlier-tokens 16384\n"
         "      --bits 0,16,8,6,4 --quant-batches 8 (val micro-batches per width)\n"
         "    training options (shared by every model):\n" +
         indented(train_options_help(experiment::compare_train_defaults()), "    ");
}

}  // namespace difftx::cli
