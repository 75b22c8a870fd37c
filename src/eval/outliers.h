// Activation outliers (paper §3.7, Table 5): the largest and the median magnitudes of
//   attention logits: every unmasked q . k / sqrt(d) of every softmax map of every layer (both
//     maps of each diff head, all 2H query heads of diff2; the paper's authors: "abs of all
//     q1 k1^T / sqrt(d) and q2 k2^T / sqrt(d)");
//   hidden states: the residual stream at the output of each of the L layers (attention and
//     MLP with their residuals, before the final RMSNorm; the embeddings are not included),
//     every element of [tokens, D] per layer;
// over the first sequences of a prepared dataset's val split, read in order. Statistics are
// exact (abs_value_stats.h): the model runs over the sample twice, once per pass.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "data/loader.h"
#include "eval/abs_value_stats.h"
#include "model/model.h"

namespace difftx::eval {

struct OutlierOptions {
  int64_t tokens = 65536;  // sample size; rounded up to whole sequences of the loader's seq_len
  // After every batch: pass (1 or 2) and sequences done in it.
  std::function<void(int pass, int64_t sequences_done, int64_t sequences_total)> progress;
};

struct OutlierResult {
  int64_t tokens = 0, sequences = 0;
  AbsSummary logits, hidden;
  std::vector<double> layer_logits_top1, layer_hidden_top1;  // [layer]: the largest |value| per layer
  double seconds = 0;
};

// val: a sequential loader (data::sequential_loader over the val split), read from its first
// window (it is rewound). Errors: a random loader, a seq_len past max_position_embeddings, data
// whose ids pass the model's vocab_size, non-finite activations.
OutlierResult measure_outliers(const model::Model& model, data::TokenLoader& val, const OutlierOptions& options);

}  // namespace difftx::eval
