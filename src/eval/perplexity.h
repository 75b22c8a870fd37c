// Loss and perplexity of a model on the windows of a sequential loader (data::sequential_loader
// over the val split of a prepared dataset: consecutive windows of seq_len + 1 tokens), every
// token but a window's first counted once as a target; perplexity = exp(mean loss).
#pragma once
#include <cstdint>
#include <functional>

#include "data/loader.h"
#include "model/decoder.h"
#include "model/model.h"

namespace difftx::eval {

struct PerplexityProgress {
  int64_t batches_done, batches_total;
  int64_t tokens;  // targets counted so far
  double loss;     // mean so far
  double seconds;
};

struct PerplexityOptions {
  int64_t max_batches = 0;  // 0: the whole split
  std::function<void(const PerplexityProgress&)> progress;  // after every batch, if set
  model::ForwardOptions forward;   // e.g. quantized attention logits (default: the model as trained)
};

struct PerplexityResult {
  double loss = 0;        // mean cross-entropy per target token, nats
  double perplexity = 0;
  int64_t tokens = 0;     // targets counted
  int64_t batches = 0;
  double seconds = 0;
};

// Reads `val` from its first window (it is rewound). Errors: a random loader, a seq_len past
// max_position_embeddings, data whose ids pass the model's vocab_size.
PerplexityResult evaluate_perplexity(const model::Model& model, data::TokenLoader& val,
                                     const PerplexityOptions& options);

}  // namespace difftx::eval
