#include "api/analyses.h"

#include "api/thread_scope.h"
#include "core/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/split_reader.h"
#include "data/tokenizer_files.h"
#include "eval/analysis_results.h"
#include "eval/attention_allocation.h"
#include "eval/logits_forward.h"
#include "eval/outliers.h"
#include "eval/perplexity.h"
#include "eval/quantization.h"
#include "kernels/attention/attention_quantized.h"

namespace difftx::api {
namespace {

namespace fs = std::filesystem;
using namespace difftx::eval;  // the analyses this file runs

PerplexityOptions perplexity_options(int64_t max_batches, const Interrupt& interrupt) {
  PerplexityOptions o;
  o.max_batches = max_batches;
  if (interrupt) o.progress = [&interrupt](const PerplexityProgress&) { interrupt(); };
  return o;
}

}  // namespace

data::Tokenizer dataset_tokenizer(const fs::path& data_dir, const fs::path& model_dir,
                                  const model::ModelConfig& config) {
  // read_dataset: a clear error for a directory that is not a prepared dataset.
  data::check_fits_vocabulary(data::read_dataset(data_dir), config.vocab_size, "the model in " + model_dir.string());
  return data::load_tokenizer(data_dir.string());
}

nlohmann::json niah(const LoadedModel& m, const fs::path& data_dir, const retrieval::NiahGrid& grid,
                    const std::string& split, const Interrupt& interrupt) {
  ThreadScope scope(m.threads);
  const data::Tokenizer tokenizer = dataset_tokenizer(data_dir, m.dir, m.model.config);
  const data::SplitReader haystack(data_dir, split);
  const retrieval::NiahGenerator generator(tokenizer, haystack);
  std::function<void(const retrieval::NiahProgress&)> progress;
  if (interrupt) progress = [&interrupt](const retrieval::NiahProgress&) { interrupt(); };
  const auto r = retrieval::evaluate_niah(model_forward(m.model), generator, grid, progress);
  return results::to_json(retrieval::niah_results(r));
}

nlohmann::json mqar(const LoadedModel& m, const fs::path& data_dir, const retrieval::MqarEvalOptions& o,
                    const Interrupt& interrupt) {
  ThreadScope scope(m.threads);
  const data::Tokenizer tokenizer = dataset_tokenizer(data_dir, m.dir, m.model.config);
  const auto r = retrieval::evaluate_mqar(model_forward(m.model), retrieval::mqar_vocabulary(tokenizer),
                                          tokenizer.vocab_size(), o, interrupt);
  return results::to_json(retrieval::mqar_results(r));
}

nlohmann::json attention(const LoadedModel& m, const fs::path& data_dir, const retrieval::NiahPromptOptions& o,
                         int64_t map_layer, int64_t map_head, const Interrupt& interrupt) {
  m.require_cpu("the attention analysis");
  const model::ModelConfig& c = m.model.config;
  DIFFTX_CHECK(map_layer >= -1 && map_layer < c.num_hidden_layers, "map_layer ", map_layer, " outside [0, ",
               c.num_hidden_layers, ") (or -1 for the mean over layers)");
  DIFFTX_CHECK(map_head >= -1 && map_head < c.num_attention_heads, "map_head ", map_head, " outside [0, ",
               c.num_attention_heads, ") (or -1 for the mean over heads)");
  ThreadScope scope(m.threads);
  const data::Tokenizer tokenizer = dataset_tokenizer(data_dir, m.dir, m.model.config);
  const data::SplitReader haystack(data_dir, "val");
  const std::vector<AllocationPrompt> prompts =
      retrieval::niah_allocation_prompts(retrieval::NiahGenerator(tokenizer, haystack), o);
  const AttentionAnalysis a = analyse_attention(m.model, prompts, map_layer, map_head, interrupt);
  const AllocationPrompt& p = prompts[a.figure_prompt];
  const std::vector<int32_t> seen(p.tokens.begin(), p.tokens.begin() + p.query_position + 1);
  nlohmann::json j = results::to_json(results::Analyses{
      .attention_allocation = allocation_results(a.summary),
      .attention_map = attention_map_results(p, map_layer, map_head, a.figure_weights, token_strings(tokenizer, seen))});
  j["attention_map"]["ids"] = seen;  // the prompt's ids, for attention maps and taps of the same prompt
  return j;
}

nlohmann::json outliers(const LoadedModel& m, const fs::path& data_dir, int64_t tokens, const ValWindows& windows,
                        const Interrupt& interrupt) {
  m.require_cpu("the outlier analysis");
  OutlierOptions o;
  o.tokens = tokens;
  if (interrupt) o.progress = [&interrupt](int, int64_t, int64_t) { interrupt(); };
  ThreadScope scope(m.threads);
  data::TokenLoader val = data::sequential_loader(data_dir, "val", windows.micro_batch, windows.seq_len);
  return results::to_json(outlier_results(measure_outliers(m.model, val, o)));
}

nlohmann::json quant(const LoadedModel& m, const fs::path& data_dir, const std::vector<int>& bits,
                     const ValWindows& windows, int64_t max_batches, const Interrupt& interrupt) {
  m.require_cpu("the quantization analysis");
  for (int b : bits) kernels::check_logit_bits(b);
  ThreadScope scope(m.threads);
  data::TokenLoader val = data::sequential_loader(data_dir, "val", windows.micro_batch, windows.seq_len);
  return results::to_json(quantization_sweep(m.model, val, bits, perplexity_options(max_batches, interrupt)));
}

nlohmann::json evaluate(const LoadedModel& m, const fs::path& data_dir, const ValWindows& windows, int64_t max_batches,
                        const Interrupt& interrupt) {
  ThreadScope scope(m.threads);
  data::TokenLoader val = data::sequential_loader(data_dir, "val", windows.micro_batch, windows.seq_len);
  const PerplexityResult r = evaluate_perplexity(m.model, val, perplexity_options(max_batches, interrupt));
  return nlohmann::json{{"val_loss", r.loss}, {"perplexity", r.perplexity}, {"tokens", r.tokens},
                        {"batches", r.batches}, {"seconds", r.seconds}};
}

}  // namespace difftx::api
