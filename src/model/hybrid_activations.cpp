#include "model/hybrid_activations.h"

#include <algorithm>

#include "core/arena_plan.h"
#include "core/error.h"

namespace difftx::model {

HybridActivations::HybridActivations(const ModelConfig& c, int64_t B_, int64_t T_, backends::Backend& backend_,
                                     HybridUse use)
    : backend(&backend_), B(B_), T(T_), N(B_ * T_) {
  DIFFTX_CHECK(c.hybrid, "internal: HybridActivations for a model without a hybrid stack");
  const bool whole = use == HybridUse::whole_sequences;
  DIFFTX_CHECK(B >= 1 && T >= 1 && (T <= c.max_position_embeddings || !whole) && (whole || B == 1),
               "hybrid forward: ", B, " sequences of ", T, " tokens; each must hold 1 to max_position_embeddings = ",
               c.max_position_embeddings);
  DIFFTX_CHECK(backend->runs_hybrid(), "a hybrid model (SambaY, Phi-4-mini-flash) needs the LayerNorm, Mamba and GMU ",
               "ops, which ", backend->info().name, " does not have; the CPU runs them (--device cpu)");
  const kernels::AttentionDims dims = c.attention_dims(B, T);
  const int64_t D = c.hidden_size, F = c.intermediate_size, E = c.hybrid->mamba_channels(D);
  const int64_t S = c.hybrid->mamba.d_state, K = c.hybrid->mamba.d_conv;
  logit_rows = whole ? std::clamp<int64_t>((int64_t{8} << 20) / c.vocab_size, 16, N) : 0;

  // Two passes over the same carving (activations.cpp): the first counts floats, the second hands
  // out addresses. Buffers a use does not have take 0 floats (null).
  int64_t used = 0;
  F32 base;
  auto take = [&](int64_t n) -> F32 {
    if (n == 0) return nullptr;
    const F32 p = base ? base + used : nullptr;
    used += arena_rounded(n);
    return p;
  };
  const auto only_whole = [&](int64_t n) { return whole ? n : 0; };
  auto carve = [&] {
    used = 0;
    for (F32* p : {&x, &h, &h_final}) *p = take(N * D);
    mean = take(N), rstd = take(N);
    q = take(N * dims.q_width());
    k = take(N * dims.k_width()), shared_k = take(only_whole(N * dims.k_width()));
    v = take(N * dims.v_width()), shared_v = take(only_whole(N * dims.v_width()));
    lambda = take(1);
    att = take(N * dims.out_width()), att_final = take(N * dims.out_width());
    sub_rstd = take(N * c.num_attention_heads);
    lse = take(only_whole(kernels::attention_lse_floats(dims)));
    maps_out = take(only_whole(kernels::attention_maps_out_floats(dims)));
    head_norm_gain = take(2 * c.head_dim);
    for (F32* p : {&xs, &z, &u, &dt_in, &y, &gated, &memory}) *p = take(N * E);
    dt_raw = take(N * c.hybrid->mamba.dt_rank), B_ssm = take(N * S), C_ssm = take(N * S);
    window = take(only_whole((K - 1) * E)), state = take(only_whole(E * S));
    for (F32* p : {&gate, &up, &act}) *p = take(N * F);
    logits = take(logit_rows * c.vocab_size);
    tokens = backends::device_cast<int32_t>(take(N));  // int32 and float are the same size
    targets = backends::device_cast<int32_t>(take(only_whole(N)));
    row_index = backends::device_cast<int32_t>(take(whole ? 0 : N));
  };
  carve();
  arena_ = backend->allocate(used * int64_t{sizeof(float)});
  base = arena_.as<float>();
  carve();
}

}  // namespace difftx::model
