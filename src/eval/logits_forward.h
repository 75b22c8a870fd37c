// A forward pass seen from outside: the logits of every position of one token sequence. The
// retrieval evaluators take one rather than a Model, so that a modified forward (for instance
// one with fake-quantized attention logits) can stand in for the model's own.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "model/model.h"

namespace difftx {

struct LogitsForward {
  int64_t columns = 0;     // V: floats per row of logits
  int64_t max_tokens = 0;  // the longest sequence it accepts
  // logits [tokens.size(), columns], row t predicting token t + 1
  std::function<void(std::span<const int32_t> tokens, float* logits)> run;
};

// The model's own forward (decoder_logits), with activations planned once per sequence length.
// The model must outlive the result. Errors: an empty or too long sequence.
LogitsForward model_forward(const Model& model);

}  // namespace difftx
