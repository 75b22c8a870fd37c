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

// y[N, out] = x[N, in] W^T  (W stored [out, in], SPEC §1)
void linear(const float* x, const float* W, float* y, int64_t N, int64_t in, int64_t out) {
  gemm(Trans::N, Trans::T, N, out, in, 1.0f, x, W, 0.0f, y);
}
// dx[N, in] (= or +=) dy[N, out] W
void linear_dx(const float* dy, const float* W, float* dx, int64_t N, int64_t in, int64_t out, bool accumulate) {
  gemm(Trans::N, Trans::N, N, in, out, 1.0f, dy, W, accumulate ? 1.0f : 0.0f, dx);
}
// dW[out, in] += dy^T x
void linear_dw(const float* dy, const float* x, float* dW, int64_t N, int64_t in, int64_t out) {
  gemm(Trans::T, Trans::N, out, in, N, 1.0f, dy, x, 1.0f, dW);
}

void add_into(float* y, const float* x, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void scale_into(float* y, const float* x, float s, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) y[i] = s * x[i];
}

double dot(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace

double diff_lambda(const ModelConfig& c, const LayerTensors& w, int64_t layer_index) {
  const int64_t d = c.head_dim;
  return std::exp(dot(w.lambda_q1, w.lambda_k1, d)) - std::exp(dot(w.lambda_q2, w.lambda_k2, d)) +
         c.lambda_init(layer_index);
}

void decoder_forward(const Model& model, Activations& acts, const int32_t* inputs, const ForwardOptions& options) {
  check_logit_bits(options.attention_logit_bits);
  const ModelConfig& c = model.config;
  const AttentionDims a = c.attention_dims(acts.B, acts.T);
  const int64_t N = acts.N, D = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads;
  const float eps = static_cast<float>(c.rms_norm_eps);

  embedding_forward(model.tensors.embed, inputs, acts.layers[0].x, N, D, c.vocab_size);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerTensors& w = model.tensors.layers[l];
    LayerActivations& s = acts.layers[l];
    rmsnorm_forward(s.x, w.input_norm, s.h1, s.rstd1, N, D, eps);
    linear(s.h1, w.q_proj, s.q, N, D, a.q_width());
    linear(s.h1, w.k_proj, s.k, N, D, a.k_width());
    linear(s.h1, w.v_proj, s.v, N, D, a.v_width());
    rope_forward(acts.rope, c.rope_style, s.q, acts.B, acts.T, a.q_width() / c.head_dim, 0);
    rope_forward(acts.rope, c.rope_style, s.k, acts.B, acts.T, a.k_width() / c.head_dim, 0);
    const float* lambda = nullptr;
    if (c.attention == AttentionKind::diff) {
      s.lambda = static_cast<float>(diff_lambda(c, w, l));
      lambda = &s.lambda;
    } else if (c.attention == AttentionKind::diff2) {
      linear(s.h1, w.lambda_proj, s.lambda_logits, N, D, H);
      lambda = s.lambda_logits;
    }
    if (options.attention_logit_bits == 0) attention_forward(a, s.q, s.k, s.v, lambda, s.att, s.saved);
    else attention_forward_quantized(a, s.q, s.k, s.v, lambda, s.att, options.attention_logit_bits);
    if (s.att_final != s.att) {
      // SPEC §2.2 Eq. 3: (1 - lambda_init) * RMSNorm_2d(head), gain shared by the heads.
      // diff_subln = false (the paper's "DIFF - GroupNorm" ablation) drops the whole step.
      const float factor = static_cast<float>(1.0 - c.lambda_init(l));
      rmsnorm_forward(s.att, w.subln, s.att_final, s.sub_rstd, N * H, 2 * c.head_dim, eps);
      scale_into(s.att_final, s.att_final, factor, N * a.out_width());
    }
    linear(s.att_final, w.o_proj, s.y, N, a.out_width(), D);
    add_into(s.y, s.x, N * D);
    rmsnorm_forward(s.y, w.post_norm, s.h2, s.rstd2, N, D, eps);
    linear(s.h2, w.gate_proj, s.gate, N, D, F);
    linear(s.h2, w.up_proj, s.up, N, D, F);
    swiglu_forward(s.gate, s.up, s.act, N * F);
    float* next = l + 1 < c.num_hidden_layers ? acts.layers[l + 1].x : acts.x_final;
    std::memcpy(next, s.y, sizeof(float) * N * D);
    gemm(Trans::N, Trans::T, N, D, F, 1.0f, s.act, w.down_proj, 1.0f, next);  // next += act Wd^T
  }
  rmsnorm_forward(acts.x_final, model.tensors.final_norm, acts.h_final, acts.rstd_final, N, D, eps);
}

namespace {

int64_t count_targets(const int32_t* targets, int64_t n) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += targets[i] != kIgnoreId;
  return count;
}

void backward_layers(const Model& model, Activations& acts, const int32_t* inputs, ModelTensors& g) {
  const ModelConfig& c = model.config;
  const AttentionDims a = c.attention_dims(acts.B, acts.T);
  const int64_t N = acts.N, D = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads;
  float* dx = acts.d_resid;  // gradient w.r.t. the residual stream, layer by layer

  for (int64_t l = c.num_hidden_layers - 1; l >= 0; --l) {
    const LayerTensors& w = model.tensors.layers[l];
    LayerTensors& gw = g.layers[l];
    LayerActivations& s = acts.layers[l];
    // MLP: x_{l+1} = y + (silu(h2 Wg^T) * h2 Wu^T) Wd^T
    float* d_act = acts.d_ff1;
    linear_dx(dx, w.down_proj, d_act, N, F, D, false);
    linear_dw(dx, s.act, gw.down_proj, N, F, D);
    swiglu_backward(s.gate, s.up, d_act, acts.d_ff2, acts.d_ff3, N * F);
    linear_dx(acts.d_ff2, w.gate_proj, acts.d_a, N, D, F, false);
    linear_dx(acts.d_ff3, w.up_proj, acts.d_a, N, D, F, true);
    linear_dw(acts.d_ff2, s.h2, gw.gate_proj, N, D, F);
    linear_dw(acts.d_ff3, s.h2, gw.up_proj, N, D, F);
    rmsnorm_backward(s.y, w.post_norm, s.rstd2, acts.d_a, acts.d_b, gw.post_norm, N, D);
    add_into(dx, acts.d_b, N * D);  // dx now holds d y

    // Attention: y = x + att_final Wo^T
    linear_dx(dx, w.o_proj, acts.d_att, N, a.out_width(), D, false);
    linear_dw(dx, s.att_final, gw.o_proj, N, a.out_width(), D);
    float* d_att = acts.d_att;
    if (s.att_final != s.att) {
      const float factor = static_cast<float>(1.0 - c.lambda_init(l));
      scale_into(acts.d_att, acts.d_att, factor, N * a.out_width());
      rmsnorm_backward(s.att, w.subln, s.sub_rstd, acts.d_att, acts.d_att2, gw.subln, N * H, 2 * c.head_dim);
      d_att = acts.d_att2;
    }
    const float* lambda = c.attention == AttentionKind::diff ? &s.lambda
                          : c.attention == AttentionKind::diff2 ? s.lambda_logits : nullptr;
    attention_backward(a, s.q, s.k, s.v, lambda, s.att, s.saved, d_att, acts.d_q, acts.d_k, acts.d_v,
                       acts.d_lambda);
    if (c.attention == AttentionKind::diff) {
      // d lambda / d lq1 = exp(lq1.lk1) lk1, and so on (Eq. 2).
      const int64_t d = c.head_dim;
      const double dl = acts.d_lambda[0];
      const double e1 = std::exp(dot(w.lambda_q1, w.lambda_k1, d));
      const double e2 = std::exp(dot(w.lambda_q2, w.lambda_k2, d));
      for (int64_t i = 0; i < d; ++i) {
        gw.lambda_q1[i] += static_cast<float>(dl * e1 * w.lambda_k1[i]);
        gw.lambda_k1[i] += static_cast<float>(dl * e1 * w.lambda_q1[i]);
        gw.lambda_q2[i] -= static_cast<float>(dl * e2 * w.lambda_k2[i]);
        gw.lambda_k2[i] -= static_cast<float>(dl * e2 * w.lambda_q2[i]);
      }
    }
    rope_backward(acts.rope, c.rope_style, acts.d_q, acts.B, acts.T, a.q_width() / c.head_dim, 0);
    rope_backward(acts.rope, c.rope_style, acts.d_k, acts.B, acts.T, a.k_width() / c.head_dim, 0);
    linear_dx(acts.d_q, w.q_proj, acts.d_a, N, D, a.q_width(), false);
    linear_dx(acts.d_k, w.k_proj, acts.d_a, N, D, a.k_width(), true);
    linear_dx(acts.d_v, w.v_proj, acts.d_a, N, D, a.v_width(), true);
    linear_dw(acts.d_q, s.h1, gw.q_proj, N, D, a.q_width());
    linear_dw(acts.d_k, s.h1, gw.k_proj, N, D, a.k_width());
    linear_dw(acts.d_v, s.h1, gw.v_proj, N, D, a.v_width());
    if (c.attention == AttentionKind::diff2) {
      linear_dx(acts.d_lambda, w.lambda_proj, acts.d_a, N, D, H, true);
      linear_dw(acts.d_lambda, s.h1, gw.lambda_proj, N, D, H);
    }
    rmsnorm_backward(s.x, w.input_norm, s.rstd1, acts.d_a, acts.d_b, gw.input_norm, N, D);
    add_into(dx, acts.d_b, N * D);  // dx now holds d x_l
  }
  embedding_backward(inputs, dx, g.embed, N, D);
}

}  // namespace

double decoder_forward_backward(const Model& model, Activations& acts, const int32_t* inputs,
                                const int32_t* targets, ModelTensors& grads, float grad_scale) {
  const ModelConfig& c = model.config;
  const int64_t N = acts.N, D = c.hidden_size, V = c.vocab_size;
  decoder_forward(model, acts, inputs);

  // LM head and cross-entropy, fused per chunk of rows so that [N, V] never exists: the
  // chunk's dlogits (scaled to the whole batch's mean) feed the head's backward at once.
  const int64_t total = count_targets(targets, N);
  float* dh = acts.d_a;  // d h_final
  double loss_sum = 0;
  for (int64_t r0 = 0; r0 < N; r0 += acts.logit_rows) {
    const int64_t rows = std::min(acts.logit_rows, N - r0);
    linear(acts.h_final + r0 * D, model.tensors.lm_head, acts.logits, rows, D, V);
    int64_t count = 0;
    const double mean = cross_entropy_forward_backward(acts.logits, targets + r0, acts.logits, rows, V,
                                                       kIgnoreId, &count);
    loss_sum += mean * count;
    const float chunk_scale = total > 0 ? grad_scale * static_cast<float>(count) / static_cast<float>(total) : 0.0f;
    if (chunk_scale != 1.0f) scale_into(acts.logits, acts.logits, chunk_scale, rows * V);
    linear_dx(acts.logits, model.tensors.lm_head, dh + r0 * D, rows, D, V, false);
    linear_dw(acts.logits, acts.h_final + r0 * D, grads.lm_head, rows, D, V);
  }
  float* dx = acts.d_resid;
  rmsnorm_backward(acts.x_final, model.tensors.final_norm, acts.rstd_final, dh, dx, grads.final_norm, N, D);
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
    linear(acts.h_final + r0 * D, model.tensors.lm_head, acts.logits, rows, D, V);
    int64_t count = 0;
    out.sum += cross_entropy_sum(acts.logits, targets + r0, rows, V, kIgnoreId, &count);
    out.count += count;
  }
  return out;
}

void decoder_logits(const Model& model, Activations& acts, const int32_t* inputs, float* out,
                    const ForwardOptions& options) {
  const ModelConfig& c = model.config;
  decoder_forward(model, acts, inputs, options);
  linear(acts.h_final, model.tensors.lm_head, out, acts.N, c.hidden_size, c.vocab_size);
}

}  // namespace difftx
