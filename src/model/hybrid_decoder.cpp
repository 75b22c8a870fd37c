#include "model/hybrid_decoder.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/attention/attention.h"
#include "kernels/bias.h"
#include "kernels/gmu.h"
#include "kernels/layernorm.h"
#include "kernels/mamba.h"
#include "kernels/ops.h"
#include "model/layer.h"

namespace difftx {
namespace {

// Rows [first, first + count) of W: a matrix of its own (Wqkv's q, k and v; in_proj's x and z;
// x_proj's dt, B and C; fc1's gate and up).
WeightMatrix row_slice(const WeightMatrix& W, int64_t first, int64_t count) {
  DIFFTX_CHECK(W.data && first >= 0 && first + count <= W.rows, "internal: rows [", first, ", ", first + count,
               ") of a matrix of ", W.rows);
  return {W.type, static_cast<const unsigned char*>(W.data) + first * weight_row_bytes(W.type, W.cols), count, W.cols};
}

MambaDims mamba_dims(const ModelConfig& c) {
  const MambaConfig& m = c.hybrid->mamba;
  return {c.hybrid->mamba_channels(c.hidden_size), m.d_state, m.d_conv};
}

// x += out_proj(y * silu(z)), [x | z] = in_proj(h), y the scan of the conv of x; the memory layer
// keeps y (with the D skip, before the gate) for the GMU layers.
void mamba_block(const ModelConfig& c, const LayerTensors& w, const LayerMatrices& m, bool memory,
                 HybridActivations& a) {
  const MambaDims dims = mamba_dims(c);
  const int64_t N = a.N, E = dims.channels, S = dims.state, R = c.hybrid->mamba.dt_rank;
  linear(row_slice(m.in_proj, 0, E), a.h.data(), a.xs.data(), N);
  linear(row_slice(m.in_proj, E, E), a.h.data(), a.z.data(), N);
  for (int64_t b = 0; b < a.B; ++b) {  // each sequence from a fresh conv window
    std::fill(a.window.begin(), a.window.end(), 0.0f);
    mamba_conv_prompt(dims, a.T, a.xs.data() + b * a.T * E, E, w.conv_weight, w.conv_bias, a.window.data(),
                      a.u.data() + b * a.T * E);
  }
  linear(row_slice(m.x_proj, 0, R), a.u.data(), a.dt_raw.data(), N);
  linear(row_slice(m.x_proj, R, S), a.u.data(), a.B_ssm.data(), N);
  linear(row_slice(m.x_proj, R + S, S), a.u.data(), a.C_ssm.data(), N);
  linear(m.dt_proj, a.dt_raw.data(), a.dt_in.data(), N);  // its bias goes in with the softplus
  for (int64_t b = 0; b < a.B; ++b) {  // and a fresh state
    std::fill(a.state.begin(), a.state.end(), 0.0f);
    const int64_t row = b * a.T;
    mamba_scan_prompt(dims, a.T, a.u.data() + row * E, a.dt_in.data() + row * E, w.dt_bias, w.a_log,
                      a.B_ssm.data() + row * S, a.C_ssm.data() + row * S, S, w.d_skip, a.state.data(),
                      a.y.data() + row * E);
  }
  if (memory) a.memory = a.y;
  swiglu_forward(a.z.data(), a.y.data(), a.gated.data(), N * E);  // y * silu(z)
  linear(m.o_proj, a.gated.data(), a.x.data(), N, /*accumulate=*/true);
}

// x += out_proj(HeadNorm(DiffAttention(q, k, v))) + its bias; q (and, but for a cross layer, k and
// v) from Wqkv h + bias. A sliding layer sees the last sliding_window keys; the shared layer keeps
// its keys and values, which the cross layers read.
void attention_block(const ModelConfig& c, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                     HybridActivations& a) {
  const HybridConfig& hc = *c.hybrid;
  const LayerKind kind = hc.layers[layer];
  AttentionDims dims = c.attention_dims(a.B, a.T);
  const int64_t N = a.N, qw = dims.q_width(), kw = dims.k_width(), vw = dims.v_width(), d = c.head_dim;
  linear(row_slice(m.qkv_proj, 0, qw), a.h.data(), a.q.data(), N);
  add_bias(a.q.data(), w.qkv_bias, N, qw);
  const bool cross = kind == LayerKind::cross_attention;
  if (!cross) {
    linear(row_slice(m.qkv_proj, qw, kw), a.h.data(), a.k.data(), N);
    add_bias(a.k.data(), w.qkv_bias + qw, N, kw);
    linear(row_slice(m.qkv_proj, qw + kw, vw), a.h.data(), a.v.data(), N);
    add_bias(a.v.data(), w.qkv_bias + qw + kw, N, vw);
  }
  if (layer == hc.shared_kv_layer) a.shared_k = a.k, a.shared_v = a.v;
  dims.window = kind == LayerKind::sliding_attention ? hc.sliding_window : 0;
  const float lambda = static_cast<float>(diff_lambda(c, w, layer));
  attention_forward(dims, a.q.data(), cross ? a.shared_k.data() : a.k.data(), cross ? a.shared_v.data() : a.v.data(),
                    &lambda, a.att.data(), AttentionSaved{a.lse.data(), a.maps_out.data()});
  // (1 - lambda_init) RMSNorm_2d(head) subln, the gain shared by the heads (docs/SPEC.md §2.2 Eq. 3)
  const float factor = static_cast<float>(1.0 - c.lambda_init(layer));
  for (int64_t i = 0; i < 2 * d; ++i) a.head_norm_gain[i] = factor * w.subln[i];
  rmsnorm_forward(a.att.data(), a.head_norm_gain.data(), a.att_final.data(), a.sub_rstd.data(),
                  N * c.num_attention_heads, 2 * d, static_cast<float>(c.head_norm_epsilon()));
  linear(m.o_proj, a.att_final.data(), a.x.data(), N, /*accumulate=*/true);
  add_bias(a.x.data(), w.o_bias, N, c.hidden_size);
}

// x += fc2(up * silu(gate)), [gate | up] = fc1(h).
void mlp_block(const ModelConfig& c, const LayerMatrices& m, HybridActivations& a) {
  const int64_t F = c.intermediate_size;
  linear(row_slice(m.fc1, 0, F), a.h.data(), a.gate.data(), a.N);
  linear(row_slice(m.fc1, F, F), a.h.data(), a.up.data(), a.N);
  swiglu_forward(a.gate.data(), a.up.data(), a.act.data(), a.N * F);
  linear(m.down_proj, a.act.data(), a.x.data(), a.N, /*accumulate=*/true);
}

void layer_norm(const ModelConfig& c, const float* weight, const float* bias, const float* x, HybridActivations& a,
                float* out) {
  layernorm_forward(x, weight, bias, out, a.mean.data(), a.rstd.data(), a.N, c.hidden_size,
                    static_cast<float>(c.hybrid->layer_norm_eps));
}

}  // namespace

HybridActivations::HybridActivations(const ModelConfig& c, int64_t B_, int64_t T_) : B(B_), T(T_), N(B_ * T_) {
  DIFFTX_CHECK(c.hybrid, "internal: HybridActivations for a model without a hybrid stack");
  DIFFTX_CHECK(B >= 1 && T >= 1 && T <= c.max_position_embeddings, "hybrid forward: ", B, " sequences of ", T,
               " tokens; each must hold 1 to max_position_embeddings = ", c.max_position_embeddings);
  const AttentionDims dims = c.attention_dims(B, T);
  const MambaDims m = mamba_dims(c);
  const int64_t D = c.hidden_size, F = c.intermediate_size, E = m.channels, S = m.state;
  logit_rows = std::clamp<int64_t>((int64_t{8} << 20) / c.vocab_size, 16, N);
  for (std::vector<float>* buffer : {&x, &h, &h_final}) buffer->resize(N * D);
  mean.resize(N), rstd.resize(N);
  q.resize(N * dims.q_width()), k.resize(N * dims.k_width()), v.resize(N * dims.v_width());
  att.resize(N * dims.out_width()), att_final.resize(N * dims.out_width()), sub_rstd.resize(N * c.num_attention_heads);
  lse.resize(attention_lse_floats(dims)), maps_out.resize(attention_maps_out_floats(dims));
  head_norm_gain.resize(2 * c.head_dim);
  for (std::vector<float>* buffer : {&xs, &z, &u, &dt_in, &y, &gated}) buffer->resize(N * E);
  dt_raw.resize(N * c.hybrid->mamba.dt_rank), B_ssm.resize(N * S), C_ssm.resize(N * S);
  window.resize((m.conv - 1) * E), state.resize(E * S);
  for (std::vector<float>* buffer : {&gate, &up, &act}) buffer->resize(N * F);
  logits.resize(logit_rows * c.vocab_size);
}

void hybrid_forward(const Model& model, HybridActivations& a, const int32_t* inputs) {
  const ModelConfig& c = model.config;
  DIFFTX_CHECK(c.hybrid, "hybrid_forward: the model has no hybrid stack");
  embed_tokens(model.matrices.embed, inputs, a.x.data(), a.N);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerTensors& w = model.tensors.layers[l];
    const LayerMatrices& m = model.matrices.layers[l];
    layer_norm(c, w.input_norm, w.input_norm_bias, a.x.data(), a, a.h.data());
    switch (c.hybrid->layers[l]) {
      case LayerKind::mamba: mamba_block(c, w, m, false, a); break;
      case LayerKind::memory_mamba: mamba_block(c, w, m, true, a); break;
      case LayerKind::gmu:
        gmu_forward(m.in_proj, m.o_proj, a.h.data(), a.memory.data(), a.gated.data(), a.x.data(), a.N, true);
        break;
      case LayerKind::sliding_attention:
      case LayerKind::full_attention:
      case LayerKind::cross_attention: attention_block(c, w, m, l, a); break;
    }
    layer_norm(c, w.post_norm, w.post_norm_bias, a.x.data(), a, a.h.data());
    mlp_block(c, m, a);
  }
  layer_norm(c, model.tensors.final_norm, model.tensors.final_norm_bias, a.x.data(), a, a.h_final.data());
}

void hybrid_logits(const Model& model, HybridActivations& a, const int32_t* inputs, float* out) {
  hybrid_forward(model, a, inputs);
  lm_head(model, a.h_final.data(), out, a.N);
}

LossSum hybrid_loss(const Model& model, HybridActivations& a, const int32_t* inputs, const int32_t* targets) {
  hybrid_forward(model, a, inputs);
  const int64_t D = model.config.hidden_size, V = model.config.vocab_size;
  LossSum out;
  for (int64_t r0 = 0; r0 < a.N; r0 += a.logit_rows) {
    const int64_t rows = std::min(a.logit_rows, a.N - r0);
    lm_head(model, a.h_final.data() + r0 * D, a.logits.data(), rows);
    int64_t count = 0;
    out.sum += cross_entropy_sum(a.logits.data(), targets + r0, rows, V, kIgnoreId, &count);
    out.count += count;
  }
  return out;
}

}  // namespace difftx
