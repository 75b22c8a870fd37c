// The forward pass of a hybrid stack (config.h HybridConfig: Phi-4-mini-flash's SambaY,
// docs/MODEL.md "SambaY") over whole sequences, beside decoder.h's for docs/SPEC.md's decoder:
// every layer x += mixer(LN(x)); x += fc2(up * silu(gate)), then the final LayerNorm and the head.
// The mixers: Mamba-1 (Backend's mamba ops; the memory layer also keeps its scan output), DIFF V1
// attention over a sliding window or the whole causal past (the fused forward, biased Wqkv and
// out_proj, the head norm), the GMU and cross-attention over the shared layer's keys and values.
// Everything is computed by the model's backend (backends/backend.h) on its memory; inputs and
// targets are in host memory, logits come back to it. Forward only: `difftx logits` and `eval`;
// no KV cache, no training.
#pragma once
#include <cstdint>

#include "backends/backend.h"
#include "model/decoder.h"
#include "model/model.h"

namespace difftx {

// Device memory for B sequences of T tokens (N = B T rows), planned once per (B, T) on a backend:
// each buffer is reused by every layer of its kind.
struct HybridActivations {
  HybridActivations(const ModelConfig& config, int64_t B, int64_t T, backends::Backend& backend);

  using F32 = backends::DevicePtr<float>;
  backends::Backend* backend;
  int64_t B, T, N;
  int64_t logit_rows;  // rows of logits computed at a time (bounded memory for large V)
  F32 x;                                     // [N, D] the residual stream
  F32 h, mean, rstd;                         // [N, D] a LayerNorm's output; [N] its statistics
  F32 h_final;                               // [N, D] the final LayerNorm's output
  F32 q, k, v, shared_k, shared_v;           // projections; the shared layer's keys and values
  F32 lambda;                                // [1] the layer's lambda
  F32 att, att_final, sub_rstd, lse, maps_out;  // attention output, head norm, kernel state
  F32 head_norm_gain;                        // [2d] subln times (1 - lambda_init)
  F32 xs, z, u, dt_raw, B_ssm, C_ssm, dt_in, y, gated, memory;  // Mamba and GMU
  F32 window, state;                         // one sequence's conv window and SSM state
  F32 gate, up, act;                         // [N, F] the MLP
  F32 logits;                                // [logit_rows, V]
  backends::DevicePtr<int32_t> tokens, targets;  // [N] the host's ids and targets

 private:
  backends::DeviceBuffer arena_;
};

// The stack over `inputs` [B, T] (host memory); fills acts.h_final.
void hybrid_forward(const Model& model, HybridActivations& acts, const int32_t* inputs);
// Logits of every position, out [B * T, V] in host memory.
void hybrid_logits(const Model& model, HybridActivations& acts, const int32_t* inputs, float* out);
// Evaluation: summed loss and count over the counted targets [B, T] (kIgnoreId does not count).
LossSum hybrid_loss(const Model& model, HybridActivations& acts, const int32_t* inputs, const int32_t* targets);

}  // namespace difftx
