// The decoder of docs/SPEC.md §1 over a Model and planned Activations: training forward+backward,
// evaluation loss and full logits, computed on the model's backend. Inputs and targets are
// [B, T] int32 in host memory (targets may hold the ignore id -1); logits come back to the host.
#pragma once
#include <cstdint>

#include "model/activations.h"
#include "model/layer.h"
#include "model/model.h"

namespace difftx::model {

constexpr int32_t kIgnoreId = -1;

struct LossSum {
  double sum = 0;     // summed token losses
  int64_t count = 0;  // counted targets
};

// Evaluation-only changes to the forward pass, for analysis (default: the model as trained).
// A forward with options leaves nothing for a backward pass (training never takes options).
struct ForwardOptions {
  // Absmax fake-quantization of every attention logit to this many bits (paper §3.7, Fig. 8;
  // attention_quantized.h: 2..16, per (sequence, map) scale); 0 = off, the fused kernel.
  int attention_logit_bits = 0;
};

// One micro-batch: forward, loss and backward. Gradients are ACCUMULATED into `grads`
// (an arena laid out like model.weights), scaled by grad_scale (e.g. 1 / micro-batches).
// Returns the mean loss over counted targets.
double decoder_forward_backward(const Model& model, Activations& acts, const int32_t* inputs,
                                const int32_t* targets, ModelTensors& grads, float grad_scale = 1.0f);

// Evaluation: summed loss and count over counted targets (no gradients).
LossSum decoder_loss(const Model& model, Activations& acts, const int32_t* inputs, const int32_t* targets,
                     const ForwardOptions& options = {});

// The forward pass through every layer and the final norm, filling `acts` (per-layer q, k
// after RoPE, v, ... and h_final); no LM head. `core` replaces the attention over the batch
// (BatchAttention, layer.h).
void decoder_forward(const Model& model, Activations& acts, const int32_t* inputs, const ForwardOptions& options = {},
                     AttentionCore* core = nullptr);

// logits[rows, V] = h[rows, D] W^T with the LM head W, on the model's backend. F32 weights always
// take the GEMM (a chunk of one row gives the same bits as the rows around it).
void lm_head(const Model& model, backends::DevicePtr<const float> h, backends::DevicePtr<float> logits, int64_t rows);

// Logits of every position, out [B * T, V] in host memory.
void decoder_logits(const Model& model, Activations& acts, const int32_t* inputs, float* out,
                    const ForwardOptions& options = {});

// After decoder_forward: the logits of the positions `rows` (each in [0, N)) into out [n, V] in
// host memory.
void decoder_row_logits(const Model& model, Activations& acts, const int64_t* rows, int64_t n, float* out);

}  // namespace difftx::model
