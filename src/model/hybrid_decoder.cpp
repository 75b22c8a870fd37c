#include "model/hybrid_decoder.h"

#include <algorithm>

#include "backends/host_result.h"
#include "core/error.h"
#include "model/hybrid_layer.h"

namespace difftx::model {
namespace {

using backends::Backend;
using F32 = backends::DevicePtr<float>;

constexpr int64_t kFloat = sizeof(float);

// Whole sequences: each sequence's Mamba layers from a zero window and state, attention the fused
// forward over the batch's own keys and values (a sliding layer's window in the kernel), the
// shared layer's kept for the cross layers.
class WholeSequences : public HybridCore {
 public:
  explicit WholeSequences(const ModelConfig& c) : config_(c) {}

  void mamba_conv(int64_t, const kernels::MambaDims& dims, const LayerTensors& w, HybridActivations& a) override {
    const int64_t E = dims.channels;
    for (int64_t s = 0; s < a.B; ++s) {
      a.backend->zero(a.window, (dims.conv - 1) * E * kFloat);
      a.backend->mamba_conv_prompt(dims, a.T, a.xs + s * a.T * E, E, w.conv_weight, w.conv_bias, a.window,
                                   a.u + s * a.T * E);
    }
  }
  void mamba_scan(int64_t, const kernels::MambaDims& dims, const LayerTensors& w, HybridActivations& a) override {
    const int64_t E = dims.channels, S = dims.state;
    for (int64_t s = 0; s < a.B; ++s) {
      a.backend->zero(a.state, E * S * kFloat);
      const int64_t row = s * a.T;
      a.backend->mamba_scan_prompt(dims, a.T, a.u + row * E, a.dt_in + row * E, w.dt_bias, w.a_log,
                                   a.B_ssm + row * S, a.C_ssm + row * S, S, w.d_skip, a.state, a.y + row * E);
    }
  }
  void attend(int64_t layer, LayerKind kind, HybridActivations& a) override {
    const ModelConfig& c = config_;
    kernels::AttentionDims dims = c.attention_dims(a.B, a.T);
    if (layer == c.hybrid->shared_kv_layer) {
      a.backend->copy(a.shared_k, a.k, a.N * dims.k_width() * kFloat);
      a.backend->copy(a.shared_v, a.v, a.N * dims.v_width() * kFloat);
    }
    const bool cross = kind == LayerKind::cross_attention;
    dims.window = kind == LayerKind::sliding_attention ? c.hybrid->sliding_window : 0;
    a.backend->attention_forward(dims, a.q, cross ? a.shared_k : a.k, cross ? a.shared_v : a.v, a.lambda, a.att,
                                 {a.lse, a.maps_out});
  }

 private:
  const ModelConfig& config_;
};

// The host's token ids, checked, into acts.tokens.
void upload_tokens(const ModelConfig& c, HybridActivations& a, const int32_t* inputs) {
  for (int64_t i = 0; i < a.N; ++i)
    DIFFTX_CHECK(inputs[i] >= 0 && inputs[i] < c.vocab_size, "token id ", inputs[i], " at position ", i,
                 " is outside the vocabulary [0, ", c.vocab_size, ")");
  a.backend->upload(a.tokens, inputs, a.N * int64_t{sizeof(int32_t)});
}

}  // namespace

void hybrid_forward(const Model& model, HybridActivations& a, const int32_t* inputs) {
  const ModelConfig& c = model.config;
  DIFFTX_CHECK(c.hybrid, "hybrid_forward: the model has no hybrid stack");
  DIFFTX_CHECK(a.backend == model.backend, "the hybrid activations are planned on ", a.backend->info().name,
               ", the model is on ", model.backend->info().name);
  DIFFTX_CHECK(a.shared_k, "internal: hybrid_forward with the engine's activations");
  upload_tokens(c, a, inputs);
  a.backend->embed(model.matrices.embed, a.tokens, a.x, a.N);
  const HybridPass pass{*a.backend, c, a.N};
  WholeSequences core(c);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    hybrid_layer_forward(pass, model.tensors.layers[l], model.matrices.layers[l], l, a, core);
  hybrid_final_norm(pass, model.tensors, a.x, a.h_final, a.N, a);
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

}  // namespace difftx::model
