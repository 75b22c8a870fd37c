#include "model/hybrid_layer.h"

#include <algorithm>

namespace difftx::model {

using kernels::MatmulOrder;

namespace {

using backends::Backend;
using backends::DeviceMatrix;
using backends::DevicePtr;
using F32 = DevicePtr<float>;

// y[rows, W.rows] (= or +=) x W^T in the pass's orders: every projection of the stack.
void project(const HybridPass& p, const DeviceMatrix& W, DevicePtr<const float> x, F32 y, bool accumulate = false) {
  const int64_t N = p.rows;
  if (p.gemv_rows < 0) return p.backend.matmul(W, x, y, N, accumulate, MatmulOrder::by_size);
  const int64_t n = std::min(p.gemv_rows, N);
  if (n > 0) p.backend.matmul(W, x, y, n, accumulate, MatmulOrder::gemv);
  if (N > n) p.backend.matmul(W, x + n * W.cols, y + n * W.rows, N - n, accumulate, MatmulOrder::gemm);
}

// x += out_proj(memory * silu(in_proj(h))), in the pass's orders.
void gmu_block(const HybridPass& p, const LayerMatrices& m, HybridActivations& a) {
  const int64_t N = p.rows, D = p.config.hidden_size, E = m.in_proj.rows;
  if (p.gemv_rows < 0)
    return p.backend.gmu_forward(m.in_proj, m.o_proj, a.h, a.memory, a.gated, a.x, N, true, MatmulOrder::by_size);
  const int64_t n = std::min(p.gemv_rows, N);
  if (n > 0) p.backend.gmu_forward(m.in_proj, m.o_proj, a.h, a.memory, a.gated, a.x, n, true, MatmulOrder::gemv);
  if (N > n)
    p.backend.gmu_forward(m.in_proj, m.o_proj, a.h + n * D, a.memory + n * E, a.gated + n * E, a.x + n * D, N - n,
                          true, MatmulOrder::gemm);
}

// x += out_proj(y * silu(z)), [x | z] = in_proj(h), y the scan of the conv of x; the memory layer
// keeps y (with the D skip, before the gate) for the GMU layers.
void mamba_block(const HybridPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer, bool memory,
                 HybridActivations& a, HybridCore& core) {
  const kernels::MambaDims dims = hybrid_mamba_dims(p.config);
  project(p, m.mamba_x, a.h, a.xs);
  project(p, m.mamba_z, a.h, a.z);
  core.mamba_conv(layer, dims, w, a);
  project(p, m.ssm_dt, a.u, a.dt_raw);
  project(p, m.ssm_b, a.u, a.B_ssm);
  project(p, m.ssm_c, a.u, a.C_ssm);
  project(p, m.dt_proj, a.dt_raw, a.dt_in);  // its bias goes in with the softplus
  core.mamba_scan(layer, dims, w, a);
  const int64_t NE = p.rows * dims.channels;
  if (memory) p.backend.copy(a.memory, a.y, NE * int64_t{sizeof(float)});
  p.backend.swiglu_forward(a.z, a.y, a.gated, NE);  // y * silu(z)
  project(p, m.o_proj, a.gated, a.x, /*accumulate=*/true);
}

// x += out_proj(HeadNorm(DiffAttention(q, k, v))) + its bias; q (and, but for a cross layer, k and
// v) from Wqkv h + bias.
void attention_block(const HybridPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                     HybridActivations& a, HybridCore& core) {
  Backend& b = p.backend;
  const ModelConfig& c = p.config;
  const LayerKind kind = c.hybrid->layers[layer];
  const kernels::AttentionVariant v = c.attention_variant();
  const int64_t N = p.rows, qw = v.q_width(), kw = v.k_width(), d = c.head_dim;
  project(p, m.q_proj, a.h, a.q);
  b.add_bias(a.q, w.qkv_bias, N, qw);
  if (kind != LayerKind::cross_attention) {
    project(p, m.k_proj, a.h, a.k);
    b.add_bias(a.k, w.qkv_bias + qw, N, kw);
    project(p, m.v_proj, a.h, a.v);
    b.add_bias(a.v, w.qkv_bias + qw + kw, N, v.v_width());
  }
  b.diff_lambda(w.lambda_q1, w.lambda_k1, w.lambda_q2, w.lambda_k2, d, c.lambda_init(layer), a.lambda);
  core.attend(layer, kind, a);
  // (1 - lambda_init) RMSNorm_2d(head) subln, the gain shared by the heads (docs/SPEC.md §2.2 Eq. 3)
  b.scale(a.head_norm_gain, w.subln, static_cast<float>(1.0 - c.lambda_init(layer)), 2 * d);
  b.rmsnorm_forward(a.att, a.head_norm_gain, a.att_final, a.sub_rstd, N * c.num_attention_heads, 2 * d,
                    static_cast<float>(c.head_norm_epsilon()));
  project(p, m.o_proj, a.att_final, a.x, /*accumulate=*/true);
  b.add_bias(a.x, w.o_bias, N, c.hidden_size);
}

// x += fc2(up * silu(gate)), [gate | up] = fc1(h).
void mlp_block(const HybridPass& p, const LayerMatrices& m, HybridActivations& a) {
  project(p, m.gate_proj, a.h, a.gate);
  project(p, m.up_proj, a.h, a.up);
  p.backend.swiglu_forward(a.gate, a.up, a.act, p.rows * p.config.intermediate_size);
  project(p, m.down_proj, a.act, a.x, /*accumulate=*/true);
}

void layer_norm(const HybridPass& p, DevicePtr<const float> weight, DevicePtr<const float> bias,
                DevicePtr<const float> x, F32 out, int64_t rows, HybridActivations& a) {
  p.backend.layernorm_forward(x, weight, bias, out, a.mean, a.rstd, rows, p.config.hidden_size,
                              static_cast<float>(p.config.hybrid->layer_norm_eps));
}

}  // namespace

kernels::MambaDims hybrid_mamba_dims(const ModelConfig& c) {
  const MambaConfig& m = c.hybrid->mamba;
  return {c.hybrid->mamba_channels(c.hidden_size), m.d_state, m.d_conv};
}

void hybrid_layer_forward(const HybridPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                          HybridActivations& a, HybridCore& core) {
  layer_norm(p, w.input_norm, w.input_norm_bias, a.x, a.h, p.rows, a);
  switch (p.config.hybrid->layers[layer]) {
    case LayerKind::mamba: mamba_block(p, w, m, layer, false, a, core); break;
    case LayerKind::memory_mamba: mamba_block(p, w, m, layer, true, a, core); break;
    case LayerKind::gmu: gmu_block(p, m, a); break;
    case LayerKind::sliding_attention:
    case LayerKind::full_attention:
    case LayerKind::cross_attention: attention_block(p, w, m, layer, a, core); break;
  }
  layer_norm(p, w.post_norm, w.post_norm_bias, a.x, a.h, p.rows, a);
  mlp_block(p, m, a);
}

void hybrid_final_norm(const HybridPass& p, const ModelTensors& t, DevicePtr<const float> x, F32 out, int64_t rows,
                       HybridActivations& a) {
  layer_norm(p, t.final_norm, t.final_norm_bias, x, out, rows, a);
}

}  // namespace difftx::model
