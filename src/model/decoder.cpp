#include "model/decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/attention/attention_quantized.h"
#include "kernels/gemm.h"
#include "kernels/ops.h"

namespace difftx {
namespace {

void scale_into(float* y, const float* x, float s, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) y[i] = s * x[i];
}

int64_t count_targets(const int32_t* targets, int64_t n) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += targets[i] != kIgnoreId;
  return count;
}

LayerPass layer_pass(const ModelConfig& c, Activations& acts) {
  return {c, acts.B, acts.T, 0, acts.rope, acts.head_norm_gain};
}

void backward_layers(const Model& model, Activations& acts, const int32_t* inputs, ModelTensors& g) {
  const ModelConfig& c = model.config;
  const LayerPass pass = layer_pass(c, acts);
  float* dx = acts.d_resid;  // gradient w.r.t. the residual stream, layer by layer
  PhaseClock clock(acts.profile);
  for (int64_t l = c.num_hidden_layers - 1; l >= 0; --l) {
    const LayerTensors& w = model.tensors.layers[l];
    mlp_block_backward(pass, w, g.layers[l], acts.layers[l], acts, dx);
    clock.lap(StepPhase::mlp_backward);
    attention_block_backward(pass, w, g.layers[l], l, acts.layers[l], acts, dx);
    clock.lap(StepPhase::attention_backward);
  }
  embedding_backward(inputs, dx, g.embed, acts.N, c.hidden_size);
  clock.lap(StepPhase::embedding);
}

}  // namespace

void lm_head(const Model& model, const float* h, float* logits, int64_t rows) {
  const WeightMatrix& W = model.matrices.lm_head;
  if (W.type == WeightType::f32)
    gemm(Trans::N, Trans::T, rows, W.rows, W.cols, 1.0f, h, static_cast<const float*>(W.data), 0.0f, logits);
  else
    matmul(W, h, logits, rows);
}

void decoder_forward(const Model& model, Activations& acts, const int32_t* inputs, const ForwardOptions& options,
                     AttentionCore* core) {
  check_logit_bits(options.attention_logit_bits);
  const ModelConfig& c = model.config;
  const int64_t N = acts.N, D = c.hidden_size;
  BatchAttention batch(c.attention_dims(acts.B, acts.T), options.attention_logit_bits);
  AttentionCore& attention = core ? *core : batch;
  const LayerPass pass = layer_pass(c, acts);
  PhaseClock clock(acts.profile);

  embed_tokens(model.matrices.embed, inputs, acts.layers[0].x, N);
  clock.lap(StepPhase::embedding);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerActivations& s = acts.layers[l];
    const LayerTensors& w = model.tensors.layers[l];
    const LayerMatrices& m = model.matrices.layers[l];
    attention_block_forward(pass, w, m, l, s, attention);
    clock.lap(StepPhase::attention_forward);
    mlp_block_forward(pass, w, m, s, l + 1 < c.num_hidden_layers ? acts.layers[l + 1].x : acts.x_final);
    clock.lap(StepPhase::mlp_forward);
  }
  rmsnorm_forward(acts.x_final, model.tensors.final_norm, acts.h_final, acts.rstd_final, N, D,
                  static_cast<float>(c.rms_norm_eps));
  clock.lap(StepPhase::final_norm);
}

double decoder_forward_backward(const Model& model, Activations& acts, const int32_t* inputs,
                                const int32_t* targets, ModelTensors& grads, float grad_scale) {
  const ModelConfig& c = model.config;
  const int64_t N = acts.N, D = c.hidden_size, V = c.vocab_size;
  require_f32_weights(model, "training");
  DIFFTX_CHECK(acts.d_resid != nullptr, "decoder_forward_backward: the activations were planned forward_only");
  decoder_forward(model, acts, inputs);

  // LM head and cross-entropy, fused per chunk of rows so that [N, V] never exists: the
  // chunk's dlogits (scaled to the whole batch's mean) feed the head's backward at once.
  PhaseClock clock(acts.profile);
  const int64_t total = count_targets(targets, N);
  float* dh = acts.d_norm_out;  // d h_final
  double loss_sum = 0;
  for (int64_t r0 = 0; r0 < N; r0 += acts.logit_rows) {
    const int64_t rows = std::min(acts.logit_rows, N - r0);
    lm_head(model, acts.h_final + r0 * D, acts.logits, rows);
    int64_t count = 0;
    const double mean = cross_entropy_forward_backward(acts.logits, targets + r0, acts.logits, rows, V,
                                                       kIgnoreId, &count);
    loss_sum += mean * count;
    const float chunk_scale = total > 0 ? grad_scale * static_cast<float>(count) / static_cast<float>(total) : 0.0f;
    if (chunk_scale != 1.0f) scale_into(acts.logits, acts.logits, chunk_scale, rows * V);
    // dh = dlogits W, dW += dlogits^T h
    gemm(Trans::N, Trans::N, rows, D, V, 1.0f, acts.logits, model.tensors.lm_head, 0.0f, dh + r0 * D);
    gemm(Trans::T, Trans::N, V, D, rows, 1.0f, acts.logits, acts.h_final + r0 * D, 1.0f, grads.lm_head);
  }
  clock.lap(StepPhase::lm_head_xent);
  float* dx = acts.d_resid;
  rmsnorm_backward(acts.x_final, model.tensors.final_norm, acts.rstd_final, dh, dx, grads.final_norm, N, D);
  clock.lap(StepPhase::final_norm);
  backward_layers(model, acts, inputs, grads);
  return total > 0 ? loss_sum / total : 0.0;
}

LossSum decoder_loss(const Model& model, Activations& acts, const int32_t* inputs, const int32_t* targets,
                     const ForwardOptions& options) {
  const ModelConfig& c = model.config;
  const int64_t N = acts.N, D = c.hidden_size, V = c.vocab_size;
  decoder_forward(model, acts, inputs, options);
  LossSum out;
  for (int64_t r0 = 0; r0 < N; r0 += acts.logit_rows) {
    const int64_t rows = std::min(acts.logit_rows, N - r0);
    lm_head(model, acts.h_final + r0 * D, acts.logits, rows);
    int64_t count = 0;
    out.sum += cross_entropy_sum(acts.logits, targets + r0, rows, V, kIgnoreId, &count);
    out.count += count;
  }
  return out;
}

void decoder_logits(const Model& model, Activations& acts, const int32_t* inputs, float* out,
                    const ForwardOptions& options) {
  decoder_forward(model, acts, inputs, options);
  lm_head(model, acts.h_final, out, acts.N);
}

}  // namespace difftx
