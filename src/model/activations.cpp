#include "model/activations.h"

#include <algorithm>

#include "core/arena_plan.h"
#include "core/error.h"

namespace difftx::model {

Activations::Activations(const ModelConfig& c, int64_t B_, int64_t T_, ActivationUse use,
                         backends::Backend& backend_, int64_t context)
    : backend(&backend_), B(B_), T(T_), N(B_ * T_) {
  c.require_decoder("this command (training, the analyses, the decoder's forward)");
  DIFFTX_CHECK(B > 0 && T > 0, "activations for B = ", B, ", T = ", T, ": both must be positive");
  DIFFTX_CHECK(use != ActivationUse::engine || (B == 1 && context > 0),
               "the engine's activations take B = 1 and a context");
  const kernels::AttentionDims a = c.attention_dims(B, T);
  const int64_t D = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads;
  const kernels::AttentionVariant variant = c.attention_variant();
  const bool head_norm = c.has_head_norm(), training = use == ActivationUse::training,
             engine = use == ActivationUse::engine;
  logit_rows = engine ? 0 : std::clamp<int64_t>((int64_t{8} << 20) / c.vocab_size, 16, N);

  // Two passes over the same carving: the first counts floats, the second hands out addresses.
  int64_t used = 0;
  F32 base;
  auto take = [&](int64_t n) -> F32 {
    const F32 p = base ? base + used : nullptr;
    used += arena_rounded(n);
    return p;
  };
  auto carve = [&] {
    used = 0;
    layers.assign(training ? c.num_hidden_layers : 1, LayerActivations{});
    for (auto& l : layers) {
      l.x = take(N * D);
      l.h1 = take(N * D);
      l.rstd1 = take(N);
      l.q = take(N * a.q_width());
      l.k = take(N * a.k_width());
      l.v = take(N * a.v_width());
      l.lambda = variant.lambda_source() != kernels::LambdaSource::none ? take(variant.lambda_floats(N)) : nullptr;
      l.att = take(N * a.out_width());
      if (!engine) {
        l.saved.lse = take(kernels::attention_lse_floats(a));
        l.saved.maps_out = variant.paired() ? take(kernels::attention_maps_out_floats(a)) : nullptr;
      }
      l.sub_rstd = head_norm ? take(N * H) : nullptr;
      l.att_final = head_norm ? take(N * a.out_width()) : l.att;
      l.y = take(N * D);
      l.h2 = take(N * D);
      l.rstd2 = take(N);
      l.gate = take(N * F);
      l.up = take(N * F);
      l.act = take(N * F);
    }
    layers.resize(c.num_hidden_layers, layers.front());  // not training: every layer the same
    x_final = take(N * D);
    h_final = take(N * D);
    rstd_final = take(N);
    logits = engine ? nullptr : take(logit_rows * c.vocab_size);
    tokens = backends::device_cast<int32_t>(take(N));  // int32 and float are the same size
    targets = backends::device_cast<int32_t>(take(N));
    row_index = backends::device_cast<int32_t>(take(N));
    head_norm_gain = take(2 * c.head_dim);
    if (!training) return;
    d_resid = take(N * D);
    d_norm_out = take(N * D);
    d_norm_in = take(N * D);
    d_act = take(N * F);
    d_gate = take(N * F);
    d_up = take(N * F);
    d_q = take(N * a.q_width());
    d_k = take(N * a.k_width());
    d_v = take(N * a.v_width());
    d_att_final = take(N * a.out_width());
    d_att = take(N * a.out_width());
    d_lambda = take(std::max<int64_t>(N * H, 1));
    head_norm_gain_grad = take(2 * c.head_dim);
  };
  carve();
  arena_ = backend->allocate(used * int64_t{sizeof(float)});
  base = arena_.as<float>();
  carve();

  rope = backends::make_rope_table(*backend, engine ? context : T, c.head_dim, c.rope_theta, c.rope_scaling);
}

}  // namespace difftx::model
