// Named taps on a decoder_forward for the analyses (eval/): per layer, q and k after RoPE, the
// lambda the attention kernels took, the attention output and the residual stream after the
// layer. Analyses read these views, not the fields of Activations. They are host memory: the
// activations of a model on the CPU backend (an error for another device's).
#pragma once
#include <cstdint>

#include "model/activations.h"
#include "model/config.h"

namespace difftx::model {

struct LayerTap {
  kernels::AttentionDims dims;             // B, T of the forward
  const float* q;                 // [B, T, q_width] after RoPE
  const float* k;                 // [B, T, k_width] after RoPE
  const float* lambda;            // as attention_forward takes it (variant.h)
  const float* attention_output;  // [B, T, out_width], before DIFF V1's head norm
  const float* residual_out;      // [B, T, D], the layer's output (the next layer's input)
};

// Layer `layer` (checked) of the last decoder_forward into `acts`.
LayerTap layer_tap(const ModelConfig& config, const Activations& acts, int64_t layer);

}  // namespace difftx::model
