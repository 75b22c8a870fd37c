// Quantization robustness (paper §3.7, Figure 8): the validation loss of a model whose attention
// logits are absmax fake-quantized to a number of bits (attention_quantized.h: one scale per
// sequence and softmax map), for each of a list of bit widths, on the same val windows.
#pragma once
#include <vector>

#include "eval/perplexity.h"
#include "results/results.h"

namespace difftx::eval {

// One evaluate_perplexity per entry of `bits` (each 0 or 2..16, checked before any work), as
// the points of the results schema's "quantization" (bits, val loss, val tokens; NIAH accuracy
// not measured); options.forward is replaced per point.
std::vector<results::QuantizationPoint> quantization_sweep(const model::Model& model, data::TokenLoader& val,
                                                           const std::vector<int>& bits, PerplexityOptions options);

}  // namespace difftx::eval
