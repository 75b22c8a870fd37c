// Device memory of a hybrid stack's forward (config.h HybridConfig; model/hybrid_layer.h), planned
// once on a backend: each buffer is reused by every layer of its kind. Two uses, like
// activations.h's: whole sequences (B sequences of T tokens, N = B T rows: `logits`, `eval`) and
// the engine's step (N rows of many sequences, whose Mamba state is in the engine's state pool
// and whose attention reads the paged KV cache).
#pragma once
#include <cstdint>

#include "backends/backend.h"
#include "model/config.h"

namespace difftx::model {

enum class HybridUse { whole_sequences, engine };

struct HybridActivations {
  // engine: B = 1 and T the most rows of a step (any count; no keys and values of its own, no
  // conv window or state, no logits or targets).
  HybridActivations(const ModelConfig& config, int64_t B, int64_t T, backends::Backend& backend,
                    HybridUse use = HybridUse::whole_sequences);

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
  backends::DevicePtr<int32_t> row_index;        // engine: [N] the rows whose logits are wanted

 private:
  backends::DeviceBuffer arena_;
};

}  // namespace difftx::model
