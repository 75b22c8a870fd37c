// `difftx analyze attention`: attention allocation on NIAH prompts (paper Table 3) and one
// prompt's normalised attention row (Figure 1).
#include <cstdio>

#include "api/analyses.h"
#include "cli/analyze_targets.h"
#include "core/error.h"
#include "data/split_reader.h"
#include "eval/analysis_results.h"
#include "eval/attention_maps.h"
#include "eval/retrieval/niah_prompts.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {

using namespace difftx::eval;  // the analyses this command runs

void print_row(const char* label, const Allocation& a) {
  std::printf("  %-8s %8.4f %8.4f %8.4f\n", label, a.answer, a.noise, a.noise_abs);
}

}  // namespace

int analyze_attention(Args& args) {
  const std::string model_dir = args.require("model");
  const std::string data_dir = args.require("data");
  retrieval::NiahPromptOptions o;
  o.context = args.get_int("context", o.context, kSequenceLength);
  o.needles = args.get_int("needles", o.needles, kPositive);
  if (args.get("depths")) o.depths = args.get_double_list("depths", "", kFraction);
  o.per_depth = args.get_int("per-depth", o.per_depth, kPositive);
  o.seed = static_cast<uint64_t>(args.get_int("seed", static_cast<int64_t>(o.seed), kAnySeed));
  const int64_t map_layer = args.get_int("map-layer", -1, IntRange{-1, kMaxCount});
  const int64_t map_head = args.get_int("map-head", -1, IntRange{-1, kMaxCount});
  const std::string json_path = args.get("json", "");
  args.finish();

  const model::Model model = model::load_model_dir(model_dir);
  const model::ModelConfig& c = model.config;
  DIFFTX_CHECK(map_layer >= -1 && map_layer < c.num_hidden_layers, "--map-layer ", map_layer, " outside [0, ",
               c.num_hidden_layers, ") (or -1 for the mean over layers)");
  DIFFTX_CHECK(map_head >= -1 && map_head < c.num_attention_heads, "--map-head ", map_head, " outside [0, ",
               c.num_attention_heads, ") (or -1 for the mean over heads)");
  const data::Tokenizer tokenizer = api::dataset_tokenizer(data_dir, model_dir, c);
  const data::SplitReader haystack(data_dir, "val");
  const std::vector<AllocationPrompt> prompts =
      retrieval::niah_allocation_prompts(retrieval::NiahGenerator(tokenizer, haystack), o);
  const AttentionAnalysis analysis = analyse_attention(model, prompts, map_layer, map_head);
  const AllocationSummary& s = analysis.summary;

  std::printf("attention allocation: %s, %lld NIAH prompts of %lld tokens (%lld needles, one queried), query = the\n"
              "position that predicts the answer's first token\n",
              kernels::attention_kind_name(c.attention), (long long)s.prompts, (long long)o.context,
              (long long)o.needles);
  std::printf("normalisation: %s\n", kAllocationNormalisation);
  if (s.skipped_rows > 0)
    std::printf("left out: %lld of %lld rows (|1 - w| < %g)\n", (long long)s.skipped_rows, (long long)s.rows, kMinRowSum);
  std::printf("\n  %-8s %8s %8s %8s\n", "depth", "answer", "noise", "|noise|");
  for (size_t i = 0; i < s.depths.size(); ++i) {
    char label[32];
    std::snprintf(label, sizeof label, "%.0f%%", 100 * s.depths[i]);
    print_row(label, s.by_depth[i]);
  }
  print_row("mean", s.mean);
  std::printf("\n  %-8s %8s %8s %8s\n", "layer", "answer", "noise", "|noise|");
  for (size_t l = 0; l < s.by_layer.size(); ++l) print_row(std::to_string(l).c_str(), s.by_layer[l]);

  const AllocationPrompt& p = prompts[analysis.figure_prompt];
  const std::vector<double>& weights = analysis.figure_weights;
  const Allocation a = allocate(weights.data(), static_cast<int64_t>(weights.size()), p);
  std::printf("\nattention map (layer %lld, head %lld; -1 = mean) of prompt %zu (depth %.2f): answer %.4f, noise %.4f\n",
              (long long)map_layer, (long long)map_head, analysis.figure_prompt, p.depth, a.answer, a.noise);
  const std::vector<int32_t> seen(p.tokens.begin(), p.tokens.begin() + p.query_position + 1);
  write_analysis_json(json_path, {.attention_allocation = allocation_results(s),
                                  .attention_map = attention_map_results(p, map_layer, map_head, weights,
                                                                         token_strings(tokenizer, seen))});
  return 0;
}

}  // namespace difftx::cli
