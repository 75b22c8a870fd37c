// Loss and perplexity of a model on the validation split of a prepared dataset: consecutive
// windows of seq_len + 1 tokens (the loader's sequential sampling), every token but a window's
// first counted once as a target; perplexity = exp(mean loss).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>

#include "model/decoder.h"
#include "model/model.h"

namespace difftx {

struct PerplexityProgress {
  int64_t batches_done, batches_total;
  int64_t tokens;  // targets counted so far
  double loss;     // mean so far
  double seconds;
};

struct PerplexityOptions {
  int64_t seq_len = 256;
  int64_t micro_batch = 8;
  int64_t max_batches = 0;  // 0: the whole split
  std::function<void(const PerplexityProgress&)> progress;  // after every batch, if set
  ForwardOptions forward;   // e.g. quantized attention logits (default: the model as trained)
};

struct PerplexityResult {
  double loss = 0;        // mean cross-entropy per target token, nats
  double perplexity = 0;
  int64_t tokens = 0;     // targets counted
  int64_t batches = 0;
  double seconds = 0;
};

// Errors: a data directory that is not a prepared dataset, a val split shorter than one window,
// a seq_len past max_position_embeddings, token ids past the model's vocab_size.
PerplexityResult evaluate_perplexity(const Model& model, const std::filesystem::path& data_dir,
                                     const PerplexityOptions& options);

}  // namespace difftx
