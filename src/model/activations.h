// Activation memory of the decoder, planned once per (B, T): every tensor the forward pass
// keeps for the backward pass, and the backward pass's scratch, carved from one arena.
#pragma once
#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "kernels/attention/attention.h"
#include "model/config.h"
#include "model/step_profile.h"

namespace difftx {

struct LayerActivations {
  float* x;          // [N, D] layer input (residual stream)
  float* h1;         // [N, D] RMSNorm(x)
  float* rstd1;      // [N]
  float* q;          // [N, q_width] after RoPE
  float* k;          // [N, k_width] after RoPE
  float* v;          // [N, v_width]
  float* lambda_logits;  // diff2: [N, H]
  float lambda;          // diff: the layer's lambda (Eq. 2)
  float* att;        // [N, out_width] attention output (before the V1 headwise norm)
  AttentionSaved saved;
  float* sub_rstd;   // diff with subln: [N * H]
  float* att_final;  // [N, out_width] what o_proj sees (== att unless diff with diff_subln)
  float* y;          // [N, D] x + attention
  float* h2;         // [N, D] RMSNorm(y)
  float* rstd2;      // [N]
  float* gate;       // [N, F]
  float* up;         // [N, F]
  float* act;        // [N, F] silu(gate) * up
};

// training: every layer's tensors kept for the backward, and its scratch. forward_only (the
// prefill of inference): one set of layer tensors that every layer reuses in turn (a layer's
// output overwrites its input, as in the decode step) and no backward scratch, so a 512-token
// prefill of a 1.2B model plans about 1/16 of the memory.
enum class ActivationUse { training, forward_only };

struct Activations {
  Activations(const ModelConfig& config, int64_t B, int64_t T, ActivationUse use = ActivationUse::training);

  int64_t B, T, N;  // N = B * T rows
  int64_t logit_rows;  // rows of logits computed at a time (bounded memory for large V)
  std::vector<LayerActivations> layers;
  float* x_final;     // [N, D] output of the last layer
  float* h_final;     // [N, D] RMSNorm(x_final)
  float* rstd_final;  // [N]
  float* logits;      // [logit_rows, V]
  Buffer<float> rope_table_storage;
  RopeTable rope;
  // Backward scratch, reused by every layer (null when forward_only): gradients of the loss w.r.t.
  float* d_resid = nullptr;     // [N, D] the residual stream, layer by layer
  float* d_norm_out = nullptr;  // [N, D] an RMSNorm's output (h1, h2, h_final)
  float* d_norm_in = nullptr;   // [N, D] that RMSNorm's input
  float *d_act = nullptr, *d_gate = nullptr, *d_up = nullptr;  // [N, F] the MLP's silu(gate) * up, gate and up
  float *d_q = nullptr, *d_k = nullptr, *d_v = nullptr;        // projections' outputs
  float* d_att_final = nullptr;  // [N, out_width] what o_proj sees
  float* d_att = nullptr;        // [N, out_width] the attention output (before the head norm)
  float* d_lambda = nullptr;     // diff: [1], diff2: [N, H]
  // DIFF V1's head norm gain times (1 - lambda_init), and its gradient [2d] (null when forward_only).
  float *head_norm_gain = nullptr, *head_norm_gain_grad = nullptr;
  // Opt-in: when set, the decoder adds the wall time of each phase of every call here.
  StepProfile* profile = nullptr;

 private:
  Buffer<float> arena_;
};

}  // namespace difftx
