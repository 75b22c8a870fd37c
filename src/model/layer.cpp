#include "model/layer.h"

#include <algorithm>

#include "core/error.h"

namespace difftx::model {
namespace {

using backends::Backend;
using backends::DevicePtr;
using F32 = DevicePtr<float>;

// dx[N, in] (= or +=) dy[N, out] W
void linear_dx(Backend& b, F32 dy, F32 W, F32 dx, int64_t N, int64_t in, int64_t out, bool accumulate) {
  b.gemm(kernels::Trans::N, kernels::Trans::N, N, in, out, 1.0f, dy, W, accumulate ? 1.0f : 0.0f, dx);
}
// dW[out, in] += dy^T x
void linear_dw(Backend& b, F32 dy, F32 x, F32 dW, int64_t N, int64_t in, int64_t out) {
  b.gemm(kernels::Trans::T, kernels::Trans::N, out, in, N, 1.0f, dy, x, 1.0f, dW);
}

// The head norm's gain: (1 - lambda_init) rides on the shared gain, one pass over the heads
// instead of two (docs/SPEC.md §2.2 Eq. 3). Returns the factor.
float scale_head_norm_gain(Backend& b, const ModelConfig& c, const LayerTensors& w, int64_t layer, F32 gain) {
  const float factor = static_cast<float>(1.0 - c.lambda_init(layer));
  b.scale(gain, w.subln, factor, 2 * c.head_dim);
  return factor;
}

// The layer's head-norm gain: the pass's constants', or computed into its scratch.
DevicePtr<const float> head_norm_gain(const LayerPass& p, const LayerTensors& w, int64_t layer) {
  if (p.constants) return p.constants->head_norm_gains.as<const float>() + layer * 2 * p.config.head_dim;
  scale_head_norm_gain(p.backend, p.config, w, layer, p.head_norm_gain);
  return p.head_norm_gain;
}

void layer_lambda(Backend& b, const ModelConfig& c, const LayerTensors& w, int64_t layer, F32 lambda) {
  b.diff_lambda(w.lambda_q1, w.lambda_k1, w.lambda_q2, w.lambda_k2, c.head_dim, c.lambda_init(layer), lambda);
}

// RoPE over the pass's rows of x [N, heads * d], forward or inverse.
void rope_rows(const LayerPass& p, F32 x, int64_t heads, bool inverse) {
  p.backend.rope(p.rope, p.config.rope_style, x, heads, {p.B, p.T, p.position, p.positions}, inverse);
}

// Fills s.lambda, the layer's lambda for the attention kernels (variant.h's LambdaSource); a layer
// lambda only without the pass's constants (the engine's attention core reads it from them).
void compute_lambda(const LayerPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                    LayerActivations& s) {
  const ModelConfig& c = p.config;
  switch (c.attention_variant().lambda_source()) {
    case kernels::LambdaSource::none: break;
    case kernels::LambdaSource::layer_scalar:
      if (!p.constants) layer_lambda(p.backend, c, w, layer, s.lambda);
      break;
    case kernels::LambdaSource::token_logits: project(p, m.lambda_proj, s.h1, s.lambda); break;
  }
}

}  // namespace

LayerConstants layer_constants(Backend& b, const ModelConfig& c, const ModelTensors& tensors) {
  LayerConstants k;
  const int64_t L = c.num_hidden_layers, width = 2 * c.head_dim;
  if (c.attention_variant().lambda_source() == kernels::LambdaSource::layer_scalar) {
    k.lambdas = b.allocate(L * int64_t{sizeof(float)});
    for (int64_t l = 0; l < L; ++l) layer_lambda(b, c, tensors.layers[l], l, k.lambdas.as<float>() + l);
  }
  if (c.has_head_norm()) {
    k.head_norm_gains = b.allocate(L * width * int64_t{sizeof(float)});
    for (int64_t l = 0; l < L; ++l)
      scale_head_norm_gain(b, c, tensors.layers[l], l, k.head_norm_gains.as<float>() + l * width);
  }
  return k;
}

void project(const LayerPass& p, const backends::DeviceMatrix& W, DevicePtr<const float> x, F32 y, bool accumulate) {
  const int64_t N = p.rows();
  if (p.gemv_rows < 0) return p.backend.matmul(W, x, y, N, accumulate, kernels::MatmulOrder::by_size);
  const int64_t n = std::min(p.gemv_rows, N);
  if (n > 0) p.backend.matmul(W, x, y, n, accumulate, kernels::MatmulOrder::gemv);
  if (N > n) p.backend.matmul(W, x + n * W.cols, y + n * W.rows, N - n, accumulate, kernels::MatmulOrder::gemm);
}

void BatchAttention::attend(int64_t, LayerActivations& s) {
  if (logit_bits_ == 0) backend_.attention_forward(dims_, s.q, s.k, s.v, s.lambda, s.att, s.saved);
  else backend_.attention_forward_quantized(dims_, s.q, s.k, s.v, s.lambda, s.att, logit_bits_);
}

void attention_block_forward(const LayerPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                             LayerActivations& s, AttentionCore& core) {
  const ModelConfig& c = p.config;
  const kernels::AttentionVariant a = c.attention_variant();
  const int64_t N = p.rows(), D = c.hidden_size, H = c.num_attention_heads, d = c.head_dim;
  Backend& b = p.backend;
  b.rmsnorm_forward(s.x, w.input_norm, s.h1, s.rstd1, N, D, static_cast<float>(c.rms_norm_eps));
  project(p, m.q_proj, s.h1, s.q);
  project(p, m.k_proj, s.h1, s.k);
  project(p, m.v_proj, s.h1, s.v);
  compute_lambda(p, w, m, layer, s);
  rope_rows(p, s.q, a.q_width() / d, false);
  rope_rows(p, s.k, a.k_width() / d, false);
  core.attend(layer, s);
  if (c.has_head_norm()) {
    // (1 - lambda_init) * RMSNorm_2d(head), gain shared by the heads (docs/SPEC.md §2.2 Eq. 3).
    b.rmsnorm_forward(s.att, head_norm_gain(p, w, layer), s.att_final, s.sub_rstd, N * H, 2 * d,
                      static_cast<float>(c.head_norm_epsilon()));
  }
  if (p.residual_in_place) return project(p, m.o_proj, s.att_final, s.x, /*accumulate=*/true);
  project(p, m.o_proj, s.att_final, s.y);
  b.add(s.y, s.x, N * D);
}

void mlp_block_forward(const LayerPass& p, const LayerTensors& w, const LayerMatrices& m, LayerActivations& s,
                       F32 out) {
  const ModelConfig& c = p.config;
  const int64_t N = p.rows(), D = c.hidden_size, F = c.intermediate_size;
  Backend& b = p.backend;
  const F32 y = p.residual_in_place ? s.x : s.y;
  DIFFTX_CHECK(!p.residual_in_place || out == s.x, "an in-place residual block writes its input");
  b.rmsnorm_forward(y, w.post_norm, s.h2, s.rstd2, N, D, static_cast<float>(c.rms_norm_eps));
  project(p, m.gate_proj, s.h2, s.gate);
  project(p, m.up_proj, s.h2, s.up);
  if (c.hidden_act == MlpActivation::poly_norm) b.polynorm_glu_forward(s.gate, s.up, w.act_weight, w.act_bias, s.act, N, F);
  else b.swiglu_forward(s.gate, s.up, s.act, N * F);
  if (!p.residual_in_place) b.copy(out, s.y, sizeof(float) * N * D);
  project(p, m.down_proj, s.act, out, /*accumulate=*/true);
}

void mlp_block_backward(const LayerPass& p, const LayerTensors& w, LayerTensors& gw, LayerActivations& s,
                        Activations& acts, F32 dx) {
  const ModelConfig& c = p.config;
  const int64_t N = p.rows(), D = c.hidden_size, F = c.intermediate_size;
  Backend& b = p.backend;
  // x_{l+1} = y + (act(h2 Wg^T) * h2 Wu^T) Wd^T, act = silu or PolyNorm
  linear_dx(b, dx, w.down_proj, acts.d_act, N, F, D, false);
  linear_dw(b, dx, s.act, gw.down_proj, N, F, D);
  if (c.hidden_act == MlpActivation::poly_norm)
    b.polynorm_glu_backward(s.gate, s.up, w.act_weight, w.act_bias, acts.d_act, acts.d_gate, acts.d_up, gw.act_weight,
                            gw.act_bias, N, F);
  else b.swiglu_backward(s.gate, s.up, acts.d_act, acts.d_gate, acts.d_up, N * F);
  linear_dx(b, acts.d_gate, w.gate_proj, acts.d_norm_out, N, D, F, false);
  linear_dx(b, acts.d_up, w.up_proj, acts.d_norm_out, N, D, F, true);
  linear_dw(b, acts.d_gate, s.h2, gw.gate_proj, N, D, F);
  linear_dw(b, acts.d_up, s.h2, gw.up_proj, N, D, F);
  b.rmsnorm_backward(s.y, w.post_norm, s.rstd2, acts.d_norm_out, acts.d_norm_in, gw.post_norm, N, D);
  b.add(dx, acts.d_norm_in, N * D);  // dx now holds d y
}

void attention_block_backward(const LayerPass& p, const LayerTensors& w, LayerTensors& gw, int64_t layer,
                              LayerActivations& s, Activations& acts, F32 dx) {
  const ModelConfig& c = p.config;
  const kernels::AttentionDims a = c.attention_dims(p.B, p.T);
  const kernels::AttentionVariant v = a.variant();
  const int64_t N = p.rows(), D = c.hidden_size, H = c.num_attention_heads, d = c.head_dim;
  Backend& b = p.backend;
  // y = x + att_final Wo^T
  linear_dx(b, dx, w.o_proj, acts.d_att_final, N, a.out_width(), D, false);
  linear_dw(b, dx, s.att_final, gw.o_proj, N, a.out_width(), D);
  F32 d_att = acts.d_att_final;
  if (c.has_head_norm()) {
    // Through RMSNorm_2d with the scaled gain g' = factor * g (as in the forward pass); the
    // gain's gradient is factor * d loss / d g'.
    const float factor = scale_head_norm_gain(b, c, w, layer, p.head_norm_gain);
    b.zero(acts.head_norm_gain_grad, sizeof(float) * 2 * d);
    b.rmsnorm_backward(s.att, p.head_norm_gain, s.sub_rstd, acts.d_att_final, acts.d_att, acts.head_norm_gain_grad,
                       N * H, 2 * d);
    b.scale(acts.head_norm_gain_grad, acts.head_norm_gain_grad, factor, 2 * d);
    b.add(gw.subln, acts.head_norm_gain_grad, 2 * d);
    d_att = acts.d_att;
  }
  b.attention_backward(a, s.q, s.k, s.v, s.lambda, s.att, s.saved, d_att, acts.d_q, acts.d_k, acts.d_v,
                       acts.d_lambda);
  if (v.lambda_source() == kernels::LambdaSource::layer_scalar)
    b.diff_lambda_backward(w.lambda_q1, w.lambda_k1, w.lambda_q2, w.lambda_k2, d, acts.d_lambda, gw.lambda_q1,
                           gw.lambda_k1, gw.lambda_q2, gw.lambda_k2);
  rope_rows(p, acts.d_q, a.q_width() / d, true);
  rope_rows(p, acts.d_k, a.k_width() / d, true);
  linear_dx(b, acts.d_q, w.q_proj, acts.d_norm_out, N, D, a.q_width(), false);
  linear_dx(b, acts.d_k, w.k_proj, acts.d_norm_out, N, D, a.k_width(), true);
  linear_dx(b, acts.d_v, w.v_proj, acts.d_norm_out, N, D, a.v_width(), true);
  linear_dw(b, acts.d_q, s.h1, gw.q_proj, N, D, a.q_width());
  linear_dw(b, acts.d_k, s.h1, gw.k_proj, N, D, a.k_width());
  linear_dw(b, acts.d_v, s.h1, gw.v_proj, N, D, a.v_width());
  if (v.lambda_source() == kernels::LambdaSource::token_logits) {
    linear_dx(b, acts.d_lambda, w.lambda_proj, acts.d_norm_out, N, D, H, true);
    linear_dw(b, acts.d_lambda, s.h1, gw.lambda_proj, N, D, H);
  }
  b.rmsnorm_backward(s.x, w.input_norm, s.rstd1, acts.d_norm_out, acts.d_norm_in, gw.input_norm, N, D);
  b.add(dx, acts.d_norm_in, N * D);  // dx now holds d x_l
}

}  // namespace difftx::model
