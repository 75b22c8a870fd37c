// A forward pass seen from outside: the logits of chosen positions of one token sequence. The
// retrieval evaluators take one rather than a Model, so that a modified forward (for instance
// one with fake-quantized attention logits) can stand in for the model's own. Only the rows a
// grader needs are asked for: at small widths the LM head over every position costs more than
// the rest of the model.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "model/decoder.h"
#include "model/model.h"

namespace difftx::eval {

struct LogitsForward {
  int64_t columns = 0;     // V: floats per row of logits
  int64_t max_tokens = 0;  // the longest sequence it accepts
  // out [rows.size(), columns]: row i holds the logits at position rows[i] (predicting token
  // rows[i] + 1) of the sequence `tokens`.
  std::function<void(std::span<const int32_t> tokens, std::span<const int64_t> rows, float* out)> run;
};

// The model's own forward (decoder_forward with `options`, then the LM head on the asked rows),
// activations planned once per sequence length. The model must outlive the result. Errors: an
// empty or too long sequence, a row outside it.
LogitsForward model_forward(const model::Model& model, const model::ForwardOptions& options = {});

}  // namespace difftx::eval
