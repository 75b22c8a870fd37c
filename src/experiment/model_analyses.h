// Every analysis of the paper's §3 that `difftx experiment compare` runs on one trained model,
// as the results schema's analyses (results/results.h, docs/EXPERIMENTS.md): "niah" (Table 2), "mqar",
// "attention_allocation" and "attention_map" (Table 3, Figure 1), "outliers" (Table 5) and
// "quantization" (Figure 8: val loss and NIAH accuracy with fake-quantized attention logits).
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "eval/outliers.h"
#include "eval/retrieval/mqar_eval.h"
#include "eval/retrieval/niah_eval.h"
#include "eval/retrieval/niah_prompts.h"
#include "model/model.h"
#include "results/results.h"

namespace difftx::experiment {

struct AnalysisOptions {
  retrieval::NiahGrid niah;                 // the accuracy grid
  retrieval::MqarEvalOptions mqar;
  retrieval::NiahPromptOptions prompts;     // attention allocation and the Figure-1 map
  int64_t val_seq_len = 256, val_micro_batch = 8;  // val windows of the outlier sample and the sweep
  eval::OutlierOptions outliers;
  std::vector<int> bits = {0, 16, 8, 6, 4};  // quantization sweep; 0 = not quantized
  int64_t quant_val_batches = 8;             // val micro-batches per bit width
  retrieval::NiahGrid quant_niah;            // NIAH cells per bit width (a subset of niah, to save time)
};

// Runs them in the order above; `log` gets one line per finished analysis. The tokenizer and
// data_dir are the prepared dataset's (haystacks and val windows come from its val split).
results::Analyses analyse_model(const model::Model& model, const data::Tokenizer& tokenizer,
                                const std::filesystem::path& data_dir, const AnalysisOptions& options,
                                const std::function<void(const std::string&)>& log);

}  // namespace difftx::experiment
