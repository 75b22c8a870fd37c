// The analyses of `difftx analyze` and `difftx eval` on a loaded model and a prepared dataset,
// as the results schema's JSON objects (results/results.h, docs/EXPERIMENTS.md), for the
// embedding programs (the Python module, the C API). `interrupt` (core/interrupt.h) is called after
// every task, batch, episode or prompt (may be empty); what it throws ends the analysis and comes
// out of the call.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/loaded_model.h"
#include "core/interrupt.h"
#include "eval/retrieval/mqar_eval.h"
#include "eval/retrieval/niah_eval.h"
#include "eval/retrieval/niah_prompts.h"

namespace difftx::api {

// The prepared dataset's own tokenizer, which must fit the model's vocabulary (errors name both
// directories; a directory that is not a prepared dataset is an error too), as every analysis
// takes it.
data::Tokenizer dataset_tokenizer(const std::filesystem::path& data_dir, const std::filesystem::path& model_dir,
                                  const model::ModelConfig& config);

// Where an analysis reads its windows of the val split (outliers, quant, eval).
struct ValWindows {
  int64_t seq_len = 256, micro_batch = 8;
};

// results.json's "niah": multi-needle retrieval (paper Table 2) over haystacks of `split`.
nlohmann::json niah(const LoadedModel& m, const std::filesystem::path& data_dir, const retrieval::NiahGrid& grid,
                    const std::string& split, const Interrupt& interrupt);
// results.json's "mqar": multi-query associative recall.
nlohmann::json mqar(const LoadedModel& m, const std::filesystem::path& data_dir, const retrieval::MqarEvalOptions& o,
                    const Interrupt& interrupt);
// {"attention_allocation", "attention_map"}: attention on the answer vs the noise (Table 3) and a
// Figure-1 row of layer map_layer, head map_head (-1: the mean); attention_map also has "ids",
// the prompt's ids up to the query.
nlohmann::json attention(const LoadedModel& m, const std::filesystem::path& data_dir,
                         const retrieval::NiahPromptOptions& o, int64_t map_layer, int64_t map_head,
                         const Interrupt& interrupt);
// results.json's "outliers": activation outliers (Table 5) over `tokens` val tokens.
nlohmann::json outliers(const LoadedModel& m, const std::filesystem::path& data_dir, int64_t tokens,
                        const ValWindows& windows, const Interrupt& interrupt);
// results.json's "quantization": val loss with fake-quantized attention logits (Figure 8) per
// bit width (0: none); max_batches 0: the whole split.
nlohmann::json quant(const LoadedModel& m, const std::filesystem::path& data_dir, const std::vector<int>& bits,
                     const ValWindows& windows, int64_t max_batches, const Interrupt& interrupt);
// {"val_loss", "perplexity", "tokens", "batches", "seconds"}, as `difftx eval`.
nlohmann::json evaluate(const LoadedModel& m, const std::filesystem::path& data_dir, const ValWindows& windows,
                        int64_t max_batches, const Interrupt& interrupt);

}  // namespace difftx::api
