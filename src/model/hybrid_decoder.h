// The forward pass of a hybrid stack (config.h HybridConfig: Phi-4-mini-flash's SambaY,
// docs/MODEL.md "SambaY") over whole sequences, beside decoder.h's for docs/SPEC.md's decoder:
// every layer x += mixer(LN(x)); x += fc2(up * silu(gate)), then the final LayerNorm and the head.
// The mixers: Mamba-1 (kernels/mamba.h; the memory layer also keeps its scan output), DIFF V1
// attention over a sliding window or the whole causal past (the fused kernel, biased Wqkv and
// out_proj, the head norm), the GMU (kernels/gmu.h) and cross-attention over the shared layer's
// keys and values. Forward only: `difftx logits` and `eval`; no KV cache, no training.
#pragma once
#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "model/decoder.h"
#include "model/model.h"

namespace difftx {

// Scratch for B sequences of T tokens (N = B T rows), planned once per (B, T): each buffer is
// reused by every layer of its kind.
struct HybridActivations {
  HybridActivations(const ModelConfig& config, int64_t B, int64_t T);

  int64_t B, T, N;
  int64_t logit_rows;  // rows of logits computed at a time (bounded memory for large V)
  std::vector<float> x;                      // [N, D] the residual stream
  std::vector<float> h, mean, rstd;          // [N, D] a LayerNorm's output; [N] its statistics
  std::vector<float> h_final;                // [N, D] the final LayerNorm's output
  std::vector<float> q, k, v, shared_k, shared_v;  // projections; the shared layer's keys and values
  std::vector<float> att, att_final, sub_rstd, lse, maps_out;  // attention output, head norm, kernel state
  std::vector<float> head_norm_gain;         // [2d] subln times (1 - lambda_init)
  std::vector<float> xs, z, u, dt_raw, B_ssm, C_ssm, dt_in, y, gated, memory;  // Mamba and GMU
  std::vector<float> window, state;          // one sequence's conv window and SSM state
  std::vector<float> gate, up, act;          // [N, F] the MLP
  std::vector<float> logits;                 // [logit_rows, V]
};

// The stack over `inputs` [B, T]; fills acts.h_final.
void hybrid_forward(const Model& model, HybridActivations& acts, const int32_t* inputs);
// Logits of every position, out [B * T, V].
void hybrid_logits(const Model& model, HybridActivations& acts, const int32_t* inputs, float* out);
// Evaluation: summed loss and count over the counted targets [B, T] (kIgnoreId does not count).
LossSum hybrid_loss(const Model& model, HybridActivations& acts, const int32_t* inputs, const int32_t* targets);

}  // namespace difftx
