#include "model/hybrid_decoder.h"

#include <algorithm>

#include "backends/host_result.h"
#include "core/arena_plan.h"
#include "core/error.h"

namespace difftx {
namespace {

using backends::Backend;
using backends::DeviceMatrix;
using backends::DevicePtr;
using F32 = DevicePtr<float>;

// Rows [first, first + count) of W: a matrix of its own (Wqkv's q, k and v; in_proj's x and z;
// x_proj's dt, B and C; fc1's gate and up).
DeviceMatrix row_slice(const DeviceMatrix& W, int64_t first, int64_t count) {
  DIFFTX_CHECK(W.data && !W.panels && first >= 0 && first + count <= W.rows, "internal: rows [", first, ", ",
               first + count, ") of a matrix of ", W.rows, " stored rows");
  return {W.type, W.data + first * weight_row_bytes(W.type, W.cols), count, W.cols, nullptr};
}

// y[N, W.rows] (= or +=) x W^T: every projection of the stack.
void linear(Backend& b, const DeviceMatrix& W, DevicePtr<const float> x, F32 y, int64_t N, bool accumulate = false) {
  b.matmul(W, x, y, N, accumulate, MatmulOrder::by_size);
}

MambaDims mamba_dims(const ModelConfig& c) {
  const MambaConfig& m = c.hybrid->mamba;
  return {c.hybrid->mamba_channels(c.hidden_size), m.d_state, m.d_conv};
}

constexpr int64_t kFloat = sizeof(float);

// x += out_proj(y * silu(z)), [x | z] = in_proj(h), y the scan of the conv of x; the memory layer
// keeps y (with the D skip, before the gate) for the GMU layers.
void mamba_block(const ModelConfig& c, const LayerTensors& w, const LayerMatrices& m, bool memory,
                 HybridActivations& a) {
  Backend& b = *a.backend;
  const MambaDims dims = mamba_dims(c);
  const int64_t N = a.N, E = dims.channels, S = dims.state, R = c.hybrid->mamba.dt_rank;
  linear(b, row_slice(m.in_proj, 0, E), a.h, a.xs, N);
  linear(b, row_slice(m.in_proj, E, E), a.h, a.z, N);
  for (int64_t s = 0; s < a.B; ++s) {  // each sequence from a fresh conv window
    b.zero(a.window, (dims.conv - 1) * E * kFloat);
    b.mamba_conv_prompt(dims, a.T, a.xs + s * a.T * E, E, w.conv_weight, w.conv_bias, a.window, a.u + s * a.T * E);
  }
  linear(b, row_slice(m.x_proj, 0, R), a.u, a.dt_raw, N);
  linear(b, row_slice(m.x_proj, R, S), a.u, a.B_ssm, N);
  linear(b, row_slice(m.x_proj, R + S, S), a.u, a.C_ssm, N);
  linear(b, m.dt_proj, a.dt_raw, a.dt_in, N);  // its bias goes in with the softplus
  for (int64_t s = 0; s < a.B; ++s) {  // and a fresh state
    b.zero(a.state, E * S * kFloat);
    const int64_t row = s * a.T;
    b.mamba_scan_prompt(dims, a.T, a.u + row * E, a.dt_in + row * E, w.dt_bias, w.a_log, a.B_ssm + row * S,
                        a.C_ssm + row * S, S, w.d_skip, a.state, a.y + row * E);
  }
  if (memory) b.copy(a.memory, a.y, N * E * kFloat);
  b.swiglu_forward(a.z, a.y, a.gated, N * E);  // y * silu(z)
  linear(b, m.o_proj, a.gated, a.x, N, /*accumulate=*/true);
}

// x += out_proj(HeadNorm(DiffAttention(q, k, v))) + its bias; q (and, but for a cross layer, k and
// v) from Wqkv h + bias. A sliding layer sees the last sliding_window keys; the shared layer keeps
// its keys and values, which the cross layers read.
void attention_block(const ModelConfig& c, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                     HybridActivations& a) {
  Backend& b = *a.backend;
  const HybridConfig& hc = *c.hybrid;
  const LayerKind kind = hc.layers[layer];
  AttentionDims dims = c.attention_dims(a.B, a.T);
  const int64_t N = a.N, qw = dims.q_width(), kw = dims.k_width(), vw = dims.v_width(), d = c.head_dim;
  linear(b, row_slice(m.qkv_proj, 0, qw), a.h, a.q, N);
  b.add_bias(a.q, w.qkv_bias, N, qw);
  const bool cross = kind == LayerKind::cross_attention;
  if (!cross) {
    linear(b, row_slice(m.qkv_proj, qw, kw), a.h, a.k, N);
    b.add_bias(a.k, w.qkv_bias + qw, N, kw);
    linear(b, row_slice(m.qkv_proj, qw + kw, vw), a.h, a.v, N);
    b.add_bias(a.v, w.qkv_bias + qw + kw, N, vw);
  }
  if (layer == hc.shared_kv_layer) {
    b.copy(a.shared_k, a.k, N * kw * kFloat);
    b.copy(a.shared_v, a.v, N * vw * kFloat);
  }
  dims.window = kind == LayerKind::sliding_attention ? hc.sliding_window : 0;
  b.diff_lambda(w.lambda_q1, w.lambda_k1, w.lambda_q2, w.lambda_k2, d, c.lambda_init(layer), a.lambda);
  b.attention_forward(dims, a.q, cross ? a.shared_k : a.k, cross ? a.shared_v : a.v, a.lambda, a.att,
                      {a.lse, a.maps_out});
  // (1 - lambda_init) RMSNorm_2d(head) subln, the gain shared by the heads (docs/SPEC.md §2.2 Eq. 3)
  b.scale(a.head_norm_gain, w.subln, static_cast<float>(1.0 - c.lambda_init(layer)), 2 * d);
  b.rmsnorm_forward(a.att, a.head_norm_gain, a.att_final, a.sub_rstd, N * c.num_attention_heads, 2 * d,
                    static_cast<float>(c.head_norm_epsilon()));
  linear(b, m.o_proj, a.att_final, a.x, N, /*accumulate=*/true);
  b.add_bias(a.x, w.o_bias, N, c.hidden_size);
}

// x += fc2(up * silu(gate)), [gate | up] = fc1(h).
void mlp_block(const ModelConfig& c, const LayerMatrices& m, HybridActivations& a) {
  Backend& b = *a.backend;
  const int64_t F = c.intermediate_size;
  linear(b, row_slice(m.fc1, 0, F), a.h, a.gate, a.N);
  linear(b, row_slice(m.fc1, F, F), a.h, a.up, a.N);
  b.swiglu_forward(a.gate, a.up, a.act, a.N * F);
  linear(b, m.down_proj, a.act, a.x, a.N, /*accumulate=*/true);
}

void layer_norm(const ModelConfig& c, F32 weight, F32 bias, F32 x, HybridActivations& a, F32 out) {
  a.backend->layernorm_forward(x, weight, bias, out, a.mean, a.rstd, a.N, c.hidden_size,
                               static_cast<float>(c.hybrid->layer_norm_eps));
}

// The host's token ids, checked, into acts.tokens.
void upload_tokens(const ModelConfig& c, HybridActivations& a, const int32_t* inputs) {
  for (int64_t i = 0; i < a.N; ++i)
    DIFFTX_CHECK(inputs[i] >= 0 && inputs[i] < c.vocab_size, "token id ", inputs[i], " at position ", i,
                 " is outside the vocabulary [0, ", c.vocab_size, ")");
  a.backend->upload(a.tokens, inputs, a.N * int64_t{sizeof(int32_t)});
}

}  // namespace

HybridActivations::HybridActivations(const ModelConfig& c, int64_t B_, int64_t T_, backends::Backend& backend_)
    : backend(&backend_), B(B_), T(T_), N(B_ * T_) {
  DIFFTX_CHECK(c.hybrid, "internal: HybridActivations for a model without a hybrid stack");
  DIFFTX_CHECK(B >= 1 && T >= 1 && T <= c.max_position_embeddings, "hybrid forward: ", B, " sequences of ", T,
               " tokens; each must hold 1 to max_position_embeddings = ", c.max_position_embeddings);
  DIFFTX_CHECK(backend->runs_hybrid(), "a hybrid model (SambaY, Phi-4-mini-flash) needs the LayerNorm, Mamba and GMU ",
               "ops, which ", backend->info().name, " does not have; the CPU runs them (--device cpu)");
  const AttentionDims dims = c.attention_dims(B, T);
  const MambaDims m = mamba_dims(c);
  const int64_t D = c.hidden_size, F = c.intermediate_size, E = m.channels, S = m.state;
  logit_rows = std::clamp<int64_t>((int64_t{8} << 20) / c.vocab_size, 16, N);

  // Two passes over the same carving (activations.cpp): the first counts floats, the second hands
  // out addresses.
  int64_t used = 0;
  F32 base;
  auto take = [&](int64_t n) -> F32 {
    const F32 p = base ? base + used : nullptr;
    used += arena_rounded(n);
    return p;
  };
  auto carve = [&] {
    used = 0;
    for (F32* p : {&x, &h, &h_final}) *p = take(N * D);
    mean = take(N), rstd = take(N);
    q = take(N * dims.q_width());
    k = take(N * dims.k_width()), shared_k = take(N * dims.k_width());
    v = take(N * dims.v_width()), shared_v = take(N * dims.v_width());
    lambda = take(1);
    att = take(N * dims.out_width()), att_final = take(N * dims.out_width());
    sub_rstd = take(N * c.num_attention_heads);
    lse = take(attention_lse_floats(dims)), maps_out = take(attention_maps_out_floats(dims));
    head_norm_gain = take(2 * c.head_dim);
    for (F32* p : {&xs, &z, &u, &dt_in, &y, &gated, &memory}) *p = take(N * E);
    dt_raw = take(N * c.hybrid->mamba.dt_rank), B_ssm = take(N * S), C_ssm = take(N * S);
    window = take((m.conv - 1) * E), state = take(E * S);
    for (F32* p : {&gate, &up, &act}) *p = take(N * F);
    logits = take(logit_rows * c.vocab_size);
    tokens = backends::device_cast<int32_t>(take(N));  // int32 and float are the same size
    targets = backends::device_cast<int32_t>(take(N));
  };
  carve();
  arena_ = backend->allocate(used * kFloat);
  base = arena_.as<float>();
  carve();
}

void hybrid_forward(const Model& model, HybridActivations& a, const int32_t* inputs) {
  const ModelConfig& c = model.config;
  DIFFTX_CHECK(c.hybrid, "hybrid_forward: the model has no hybrid stack");
  DIFFTX_CHECK(a.backend == model.backend, "the hybrid activations are planned on ", a.backend->info().name,
               ", the model is on ", model.backend->info().name);
  upload_tokens(c, a, inputs);
  a.backend->embed(model.matrices.embed, a.tokens, a.x, a.N);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerTensors& w = model.tensors.layers[l];
    const LayerMatrices& m = model.matrices.layers[l];
    layer_norm(c, w.input_norm, w.input_norm_bias, a.x, a, a.h);
    switch (c.hybrid->layers[l]) {
      case LayerKind::mamba: mamba_block(c, w, m, false, a); break;
      case LayerKind::memory_mamba: mamba_block(c, w, m, true, a); break;
      case LayerKind::gmu:
        a.backend->gmu_forward(m.in_proj, m.o_proj, a.h, a.memory, a.gated, a.x, a.N, true, MatmulOrder::by_size);
        break;
      case LayerKind::sliding_attention:
      case LayerKind::full_attention:
      case LayerKind::cross_attention: attention_block(c, w, m, l, a); break;
    }
    layer_norm(c, w.post_norm, w.post_norm_bias, a.x, a, a.h);
    mlp_block(c, m, a);
  }
  layer_norm(c, model.tensors.final_norm, model.tensors.final_norm_bias, a.x, a, a.h_final);
}

void hybrid_logits(const Model& model, HybridActivations& a, const int32_t* inputs, float* out) {
  hybrid_forward(model, a, inputs);
  backends::HostResult logits(*a.backend, out, a.N * model.config.vocab_size * kFloat);
  lm_head(model, a.h_final, logits.as<float>(), a.N);
  logits.land();
}

LossSum hybrid_loss(const Model& model, HybridActivations& a, const int32_t* inputs, const int32_t* targets) {
  hybrid_forward(model, a, inputs);
  Backend& b = *a.backend;
  const int64_t D = model.config.hidden_size, V = model.config.vocab_size;
  b.upload(a.targets, targets, a.N * int64_t{sizeof(int32_t)});
  LossSum out;
  for (int64_t r0 = 0; r0 < a.N; r0 += a.logit_rows) {
    const int64_t rows = std::min(a.logit_rows, a.N - r0);
    lm_head(model, a.h_final + r0 * D, a.logits, rows);
    int64_t count = 0;
    out.sum += b.cross_entropy_sum(a.logits, a.targets + r0, rows, V, kIgnoreId, &count);
    out.count += count;
  }
  return out;
}

}  // namespace difftx
