// `difftx analyze outliers`: activation outliers over val tokens (paper Table 5).
#include <cstdio>

#include "cli/analyze_targets.h"
#include "data/loader.h"
#include "eval/analysis_results.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {

using namespace difftx::eval;  // the analyses this command runs

void print_stats(const char* label, const AbsSummary& s) {
  std::printf("  %-18s %10.3f %10.3f %10.3f %10.4f %14lld\n", label, s.top1, s.top2, s.top3, s.median, (long long)s.count);
}

}  // namespace

int analyze_outliers(Args& args) {
  const std::string model_dir = args.require("model");
  const std::string data_dir = args.require("data");
  OutlierOptions o;
  o.tokens = args.get_int("tokens", o.tokens, kPositive);
  const int64_t seq_len = args.get_int("seq-len", 256, kSequenceLength);
  const int64_t micro_batch = args.get_int("micro-batch", 8, kMicroBatch);
  const bool quiet = args.flag("quiet");
  const std::string json_path = args.get("json", "");
  args.finish();

  const model::Model model = model::load_model_dir(model_dir);
  if (!quiet)
    o.progress = [](int pass, int64_t done, int64_t total) {
      std::fprintf(stderr, "\routliers pass %d/2: %lld/%lld sequences   ", pass, (long long)done, (long long)total);
      if (pass == 2 && done == total) std::fprintf(stderr, "\n");
      std::fflush(stderr);
    };
  data::TokenLoader val = data::sequential_loader(data_dir, "val", micro_batch, seq_len);
  const OutlierResult r = measure_outliers(model, val, o);
  std::printf("activation outliers: %s, %lld val tokens (%lld sequences of %lld), %.1f s\n",
              kernels::attention_kind_name(model.config.attention), (long long)r.tokens, (long long)r.sequences,
              (long long)seq_len, r.seconds);
  std::printf("  %-18s %10s %10s %10s %10s %14s\n", "|value|", "top-1", "top-2", "top-3", "median", "values");
  print_stats("attention logits", r.logits);
  print_stats("hidden states", r.hidden);
  std::printf("\n  %-6s %14s %14s\n", "layer", "logits top-1", "hidden top-1");
  for (size_t l = 0; l < r.layer_logits_top1.size(); ++l)
    std::printf("  %-6zu %14.3f %14.3f\n", l, r.layer_logits_top1[l], r.layer_hidden_top1[l]);
  write_analysis_json(json_path, {.outliers = outlier_results(r)});
  return 0;
}

}  // namespace difftx::cli
