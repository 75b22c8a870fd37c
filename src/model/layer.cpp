#include "model/layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention/attention_quantized.h"
#include "kernels/polynorm.h"
#include "kernels/gemm.h"
#include "kernels/gemv.h"
#include "core/error.h"
#include "kernels/ops.h"
#include "kernels/quant/weight_panels.h"
#include "kernels/quant/quantize.h"

namespace difftx {
namespace {

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

// The head norm's gain: (1 - lambda_init) rides on the shared gain, one pass over the heads
// instead of two (docs/SPEC.md §2.2 Eq. 3). Returns the factor.
float scale_head_norm_gain(const ModelConfig& c, const LayerTensors& w, int64_t layer, float* gain) {
  const float factor = static_cast<float>(1.0 - c.lambda_init(layer));
  scale_into(gain, w.subln, factor, 2 * c.head_dim);
  return factor;
}

// RoPE over the pass's rows of x [N, heads * d]: one position per row, or consecutive ones.
void rope_rows(const LayerPass& p, float* x, int64_t heads) {
  const ModelConfig& c = p.config;
  if (!p.positions) return rope_forward(p.rope, c.rope_style, x, p.B, p.T, heads, p.position);
  const int64_t width = heads * c.head_dim;
  for (int64_t i = 0; i < p.rows(); ++i) rope_forward(p.rope, c.rope_style, x + i * width, 1, 1, heads, p.positions[i]);
}

// Fills the layer's lambda for the attention kernels (variant.h's LambdaSource).
const float* compute_lambda(const LayerPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                            LayerActivations& s) {
  const ModelConfig& c = p.config;
  switch (c.attention_variant().lambda_source()) {
    case LambdaSource::none: break;
    case LambdaSource::layer_scalar: s.lambda = static_cast<float>(diff_lambda(c, w, layer)); break;
    case LambdaSource::token_logits:
      project(p, m.lambda_proj, s.h1, s.lambda_logits);
      break;
  }
  return layer_lambda(c, s);
}

// d lambda / d lq1 = exp(lq1.lk1) lk1, and so on (Eq. 2), for the scalar d loss / d lambda.
void diff_lambda_backward(const ModelConfig& c, const LayerTensors& w, double dl, LayerTensors& gw) {
  const int64_t d = c.head_dim;
  const double e1 = std::exp(dot(w.lambda_q1, w.lambda_k1, d));
  const double e2 = std::exp(dot(w.lambda_q2, w.lambda_k2, d));
  for (int64_t i = 0; i < d; ++i) {
    gw.lambda_q1[i] += static_cast<float>(dl * e1 * w.lambda_k1[i]);
    gw.lambda_k1[i] += static_cast<float>(dl * e1 * w.lambda_q1[i]);
    gw.lambda_q2[i] -= static_cast<float>(dl * e2 * w.lambda_k2[i]);
    gw.lambda_k2[i] -= static_cast<float>(dl * e2 * w.lambda_q2[i]);
  }
}

}  // namespace

void linear(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulOrder order) {
  if (order != MatmulOrder::by_size) return matmul(W, x, y, N, accumulate, order);
  if (W.type != WeightType::f32) return matmul(W, x, y, N, accumulate);
  const auto* w = static_cast<const float*>(W.data);
  if (N == 1) return gemv(w, x, y, W.rows, W.cols, accumulate);
  gemm(Trans::N, Trans::T, N, W.rows, W.cols, 1.0f, x, w, accumulate ? 1.0f : 0.0f, y);
}

void project(const LayerPass& p, const WeightMatrix& W, const float* x, float* y, bool accumulate) {
  const int64_t N = p.rows();
  if (p.gemv_rows < 0) return linear(W, x, y, N, accumulate);
  const int64_t n = std::min(p.gemv_rows, N);
  if (n > 0) linear(W, x, y, n, accumulate, MatmulOrder::gemv);
  if (N > n) linear(W, x + n * W.cols, y + n * W.rows, N - n, accumulate, MatmulOrder::gemm);
}

void embed_tokens(const WeightMatrix& E, const int32_t* tokens, float* out, int64_t N) {
  if (E.type == WeightType::f32) return embedding_forward(static_cast<const float*>(E.data), tokens, out, N, E.cols, E.rows);
  for (int64_t i = 0; i < N; ++i)
    DIFFTX_CHECK(tokens[i] >= 0 && tokens[i] < E.rows, "token id ", tokens[i], " at position ", i,
                 " is outside the vocabulary [0, ", E.rows, ")");
  const int64_t row_bytes = weight_row_bytes(E.type, E.cols);
  std::vector<uint8_t> row(E.data ? 0 : row_bytes);  // a tied head held as panels only (Model::panel_matrices_only)
  for (int64_t i = 0; i < N; ++i) {
    const auto* bytes = static_cast<const unsigned char*>(E.data) + tokens[i] * row_bytes;
    if (!E.data) quant::panel_row_bytes(E, tokens[i], row.data()), bytes = row.data();
    dequantize_rows(E.type, bytes, out + i * E.cols, 1, E.cols);
  }
}

double diff_lambda(const ModelConfig& c, const LayerTensors& w, int64_t layer_index) {
  const int64_t d = c.head_dim;
  return std::exp(dot(w.lambda_q1, w.lambda_k1, d)) - std::exp(dot(w.lambda_q2, w.lambda_k2, d)) +
         c.lambda_init(layer_index);
}

void BatchAttention::attend(int64_t, LayerActivations& s, const float* lambda) {
  if (logit_bits_ == 0) attention_forward(dims_, s.q, s.k, s.v, lambda, s.att, s.saved);
  else attention_forward_quantized(dims_, s.q, s.k, s.v, lambda, s.att, logit_bits_);
}

const float* layer_lambda(const ModelConfig& c, const LayerActivations& s) {
  switch (c.attention_variant().lambda_source()) {
    case LambdaSource::none: return nullptr;
    case LambdaSource::layer_scalar: return &s.lambda;
    case LambdaSource::token_logits: return s.lambda_logits;
  }
  return nullptr;
}

void attention_block_forward(const LayerPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                             LayerActivations& s, AttentionCore& core) {
  const ModelConfig& c = p.config;
  const AttentionVariant a = c.attention_variant();
  const int64_t N = p.rows(), D = c.hidden_size, H = c.num_attention_heads, d = c.head_dim;
  const float eps = static_cast<float>(c.rms_norm_eps);
  rmsnorm_forward(s.x, w.input_norm, s.h1, s.rstd1, N, D, eps);
  project(p, m.q_proj, s.h1, s.q);
  project(p, m.k_proj, s.h1, s.k);
  project(p, m.v_proj, s.h1, s.v);
  const float* lambda = compute_lambda(p, w, m, layer, s);
  rope_rows(p, s.q, a.q_width() / d);
  rope_rows(p, s.k, a.k_width() / d);
  core.attend(layer, s, lambda);
  if (c.has_head_norm()) {
    // (1 - lambda_init) * RMSNorm_2d(head), gain shared by the heads (docs/SPEC.md §2.2 Eq. 3).
    scale_head_norm_gain(c, w, layer, p.head_norm_gain);
    rmsnorm_forward(s.att, p.head_norm_gain, s.att_final, s.sub_rstd, N * H, 2 * d,
                    static_cast<float>(c.head_norm_epsilon()));
  }
  project(p, m.o_proj, s.att_final, s.y);
  add_into(s.y, s.x, N * D);
}

void mlp_block_forward(const LayerPass& p, const LayerTensors& w, const LayerMatrices& m, LayerActivations& s,
                       float* out) {
  const ModelConfig& c = p.config;
  const int64_t N = p.rows(), D = c.hidden_size, F = c.intermediate_size;
  rmsnorm_forward(s.y, w.post_norm, s.h2, s.rstd2, N, D, static_cast<float>(c.rms_norm_eps));
  project(p, m.gate_proj, s.h2, s.gate);
  project(p, m.up_proj, s.h2, s.up);
  if (c.hidden_act == MlpActivation::poly_norm) polynorm_glu_forward(s.gate, s.up, w.act_weight, w.act_bias, s.act, N, F);
  else swiglu_forward(s.gate, s.up, s.act, N * F);
  std::memcpy(out, s.y, sizeof(float) * N * D);
  project(p, m.down_proj, s.act, out, /*accumulate=*/true);
}

void mlp_block_backward(const LayerPass& p, const LayerTensors& w, LayerTensors& gw, LayerActivations& s,
                        Activations& acts, float* dx) {
  const ModelConfig& c = p.config;
  const int64_t N = p.rows(), D = c.hidden_size, F = c.intermediate_size;
  // x_{l+1} = y + (act(h2 Wg^T) * h2 Wu^T) Wd^T, act = silu or PolyNorm
  linear_dx(dx, w.down_proj, acts.d_act, N, F, D, false);
  linear_dw(dx, s.act, gw.down_proj, N, F, D);
  if (c.hidden_act == MlpActivation::poly_norm)
    polynorm_glu_backward(s.gate, s.up, w.act_weight, w.act_bias, acts.d_act, acts.d_gate, acts.d_up, gw.act_weight,
                          gw.act_bias, N, F);
  else swiglu_backward(s.gate, s.up, acts.d_act, acts.d_gate, acts.d_up, N * F);
  linear_dx(acts.d_gate, w.gate_proj, acts.d_norm_out, N, D, F, false);
  linear_dx(acts.d_up, w.up_proj, acts.d_norm_out, N, D, F, true);
  linear_dw(acts.d_gate, s.h2, gw.gate_proj, N, D, F);
  linear_dw(acts.d_up, s.h2, gw.up_proj, N, D, F);
  rmsnorm_backward(s.y, w.post_norm, s.rstd2, acts.d_norm_out, acts.d_norm_in, gw.post_norm, N, D);
  add_into(dx, acts.d_norm_in, N * D);  // dx now holds d y
}

void attention_block_backward(const LayerPass& p, const LayerTensors& w, LayerTensors& gw, int64_t layer,
                              LayerActivations& s, Activations& acts, float* dx) {
  const ModelConfig& c = p.config;
  const AttentionDims a = c.attention_dims(p.B, p.T);
  const AttentionVariant v = a.variant();
  const int64_t N = p.rows(), D = c.hidden_size, H = c.num_attention_heads, d = c.head_dim;
  // y = x + att_final Wo^T
  linear_dx(dx, w.o_proj, acts.d_att_final, N, a.out_width(), D, false);
  linear_dw(dx, s.att_final, gw.o_proj, N, a.out_width(), D);
  float* d_att = acts.d_att_final;
  if (c.has_head_norm()) {
    // Through RMSNorm_2d with the scaled gain g' = factor * g (as in the forward pass); the
    // gain's gradient is factor * d loss / d g'.
    const float factor = scale_head_norm_gain(c, w, layer, p.head_norm_gain);
    std::fill(acts.head_norm_gain_grad, acts.head_norm_gain_grad + 2 * d, 0.0f);
    rmsnorm_backward(s.att, p.head_norm_gain, s.sub_rstd, acts.d_att_final, acts.d_att, acts.head_norm_gain_grad,
                     N * H, 2 * d);
    for (int64_t i = 0; i < 2 * d; ++i) gw.subln[i] += factor * acts.head_norm_gain_grad[i];
    d_att = acts.d_att;
  }
  attention_backward(a, s.q, s.k, s.v, layer_lambda(c, s), s.att, s.saved, d_att, acts.d_q, acts.d_k, acts.d_v,
                     acts.d_lambda);
  if (v.lambda_source() == LambdaSource::layer_scalar) diff_lambda_backward(c, w, acts.d_lambda[0], gw);
  rope_backward(p.rope, c.rope_style, acts.d_q, p.B, p.T, a.q_width() / d, p.position);
  rope_backward(p.rope, c.rope_style, acts.d_k, p.B, p.T, a.k_width() / d, p.position);
  linear_dx(acts.d_q, w.q_proj, acts.d_norm_out, N, D, a.q_width(), false);
  linear_dx(acts.d_k, w.k_proj, acts.d_norm_out, N, D, a.k_width(), true);
  linear_dx(acts.d_v, w.v_proj, acts.d_norm_out, N, D, a.v_width(), true);
  linear_dw(acts.d_q, s.h1, gw.q_proj, N, D, a.q_width());
  linear_dw(acts.d_k, s.h1, gw.k_proj, N, D, a.k_width());
  linear_dw(acts.d_v, s.h1, gw.v_proj, N, D, a.v_width());
  if (v.lambda_source() == LambdaSource::token_logits) {
    linear_dx(acts.d_lambda, w.lambda_proj, acts.d_norm_out, N, D, H, true);
    linear_dw(acts.d_lambda, s.h1, gw.lambda_proj, N, D, H);
  }
  rmsnorm_backward(s.x, w.input_norm, s.rstd1, acts.d_norm_out, acts.d_norm_in, gw.input_norm, N, D);
  add_into(dx, acts.d_norm_in, N * D);  // dx now holds d x_l
}

}  // namespace difftx
