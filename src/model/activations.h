// Activation memory of the decoder, planned once per shape on the model's backend: every tensor
// the forward pass keeps for the backward pass, and the backward pass's scratch, carved from one
// arena. The engine's step (infer/batch_forward.h) plans its rows here too: one carving for both.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "kernels/attention/attention.h"
#include "model/config.h"
#include "model/step_profile.h"

namespace difftx::model {

struct LayerActivations {
  using F32 = backends::DevicePtr<float>;
  F32 x;          // [N, D] layer input (residual stream)
  F32 h1;         // [N, D] RMSNorm(x)
  F32 rstd1;      // [N]
  F32 q;          // [N, q_width] after RoPE
  F32 k;          // [N, k_width] after RoPE
  F32 v;          // [N, v_width]
  F32 lambda;     // as the attention kernels take it (variant.h): null (baseline), the layer's
                  // lambda of Eq. 2 (diff, diff_grouped: [1]) or the rows' logits (diff2: [N, H])
  F32 att;        // [N, out_width] attention output (before the V1 headwise norm)
  backends::DeviceAttentionSaved saved;  // null when nothing is kept for a backward
  F32 sub_rstd;   // diff with subln: [N * H]
  F32 att_final;  // [N, out_width] what o_proj sees (== att unless diff with diff_subln)
  F32 y;          // [N, D] x + attention
  F32 h2;         // [N, D] RMSNorm(y)
  F32 rstd2;      // [N]
  F32 gate;       // [N, F]
  F32 up;         // [N, F]
  F32 act;        // [N, F] silu(gate) * up
};

// training: every layer's tensors kept for the backward, and its scratch. forward_only (the
// prefill of inference, eval, logits): one set of layer tensors that every layer reuses in turn
// (a layer's output overwrites its input) and no backward scratch, so a 512-token prefill of a
// 1.2B model plans about 1/16 of the memory. engine: forward_only for rows of many sequences
// (B = 1, T = the most rows of a step), whose attention reads the KV cache: nothing saved for a
// backward, no logits, and RoPE's table for `context` positions.
enum class ActivationUse { training, forward_only, engine };

struct Activations {
  Activations(const ModelConfig& config, int64_t B, int64_t T, ActivationUse use = ActivationUse::training,
              backends::Backend& backend = backends::cpu_backend(), int64_t context = 0);

  using F32 = backends::DevicePtr<float>;
  backends::Backend* backend;
  int64_t B, T, N;  // N = B * T rows
  int64_t logit_rows;  // rows of logits computed at a time (bounded memory for large V)
  std::vector<LayerActivations> layers;
  F32 x_final;     // [N, D] output of the last layer
  F32 h_final;     // [N, D] RMSNorm(x_final)
  F32 rstd_final;  // [N]
  F32 logits;      // [logit_rows, V] (null for the engine)
  // The host's integers on the device: token ids, targets and row indices [N] each.
  backends::DevicePtr<int32_t> tokens, targets, row_index;
  backends::RopeTableBuffer rope;  // positions [0, T), or [0, context) for the engine
  // Backward scratch, reused by every layer (null unless training): gradients of the loss w.r.t.
  F32 d_resid;     // [N, D] the residual stream, layer by layer
  F32 d_norm_out;  // [N, D] an RMSNorm's output (h1, h2, h_final)
  F32 d_norm_in;   // [N, D] that RMSNorm's input
  F32 d_act, d_gate, d_up;  // [N, F] the MLP's silu(gate) * up, gate and up
  F32 d_q, d_k, d_v;        // projections' outputs
  F32 d_att_final;  // [N, out_width] what o_proj sees
  F32 d_att;        // [N, out_width] the attention output (before the head norm)
  F32 d_lambda;     // diff: [1], diff2: [N, H]
  // DIFF V1's head norm gain times (1 - lambda_init) [2d], and its gradient (null unless training).
  F32 head_norm_gain, head_norm_gain_grad;
  // Opt-in: when set, the decoder adds the wall time of each phase of every call here.
  StepProfile* profile = nullptr;

 private:
  backends::DeviceBuffer arena_;
};

}  // namespace difftx::model
