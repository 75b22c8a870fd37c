#include "infer/session.h"

#include "core/error.h"
#include "kernels/gemv.h"
#include "model/activations.h"
#include "model/decoder.h"

namespace difftx {

InferenceSession::InferenceSession(const Model& model, int64_t context)
    : model_(model),
      cache_(model.config, context > 0 ? context : model.config.max_position_embeddings),
      attention_{model.config.attention, model.config.num_attention_heads, model.config.num_key_value_heads,
                 model.config.head_dim, cache_.capacity},
      attention_scratch_(attention_) {
  const ModelConfig& c = model.config;
  rope_storage_.resize(rope_table_floats(cache_.capacity, c.head_dim));
  rope_ = rope_table_build(rope_storage_.data(), cache_.capacity, c.head_dim, c.rope_theta, c.rope_scaling);
  if (c.attention == AttentionKind::diff)
    for (int64_t l = 0; l < c.num_hidden_layers; ++l)
      diff_lambda_.push_back(static_cast<float>(diff_lambda(c, model.tensors.layers[l], l)));

  const AttentionDims a = attention_.attention_dims();
  const int64_t D = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads;
  const int64_t sizes[] = {D, D, a.q_width(), a.k_width(), a.v_width(), H, a.out_width(), a.out_width(), H, F, F, F,
                           c.vocab_size};
  float** slots[] = {&x_, &h_, &q_, &k_, &v_, &lambda_logits_, &att_, &att_final_, &sub_rstd_, &gate_, &up_, &act_,
                     &logits_};
  int64_t total = 0;
  for (int64_t n : sizes) total += (n + 15) / 16 * 16;
  arena_.resize(total);
  float* p = arena_.data();
  for (size_t i = 0; i < std::size(sizes); ++i) {
    *slots[i] = p;
    p += (sizes[i] + 15) / 16 * 16;
  }
}

const float* InferenceSession::prefill(std::span<const int32_t> tokens) {
  const ModelConfig& c = model_.config;
  const int64_t n = static_cast<int64_t>(tokens.size()), D = c.hidden_size;
  DIFFTX_CHECK(cache_.length == 0, "prefill: the cache already holds ", cache_.length,
               " tokens (prefill starts a sequence; call reset() or decode())");
  DIFFTX_CHECK(n >= 1, "prefill: the prompt has no tokens");
  DIFFTX_CHECK(n <= cache_.capacity, "prompt of ", n, " tokens is longer than the context of ", cache_.capacity,
               " tokens");
  Activations acts(c, 1, n);
  decoder_forward(model_, acts, tokens.data());
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) cache_.store(l, 0, n, acts.layers[l].k, acts.layers[l].v);
  gemv(model_.tensors.lm_head, acts.h_final + (n - 1) * D, logits_, c.vocab_size, D);
  cache_.length = n;
  return logits_;
}

const float* InferenceSession::decode(int32_t token) {
  const ModelConfig& c = model_.config;
  const AttentionDims a = attention_.attention_dims();
  const int64_t pos = cache_.length, D = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads;
  const int64_t d = c.head_dim;
  const float eps = static_cast<float>(c.rms_norm_eps);
  DIFFTX_CHECK(pos < cache_.capacity, "context full: all ", cache_.capacity,
               " positions of the KV cache are used (max_position_embeddings ", c.max_position_embeddings,
               ", or a smaller --context)");
  embedding_forward(model_.tensors.embed, &token, x_, 1, D, c.vocab_size);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerTensors& w = model_.tensors.layers[l];
    // Attention block (SPEC §1, paper Eq. 4), x += Attn(RMSNorm(x)).
    rmsnorm_forward(x_, w.input_norm, h_, &rstd_, 1, D, eps);
    gemv(w.q_proj, h_, q_, a.q_width(), D);
    gemv(w.k_proj, h_, k_, a.k_width(), D);
    gemv(w.v_proj, h_, v_, a.v_width(), D);
    rope_forward(rope_, c.rope_style, q_, 1, 1, a.q_width() / d, pos);
    rope_forward(rope_, c.rope_style, k_, 1, 1, a.k_width() / d, pos);
    cache_.store(l, pos, 1, k_, v_);
    const float* lambda = nullptr;
    if (c.attention == AttentionKind::diff) {
      lambda = &diff_lambda_[l];
    } else if (c.attention == AttentionKind::diff2) {
      gemv(w.lambda_proj, h_, lambda_logits_, H, D);
      lambda = lambda_logits_;
    }
    decode_attention(attention_, pos + 1, q_, cache_.keys(l), cache_.values(l), lambda, att_, attention_scratch_);
    const float* o_in = att_;
    if (c.attention == AttentionKind::diff && c.diff_subln) {
      // SPEC §2.2 Eq. 3, exactly as in prefill: (1 - lambda_init) * RMSNorm_2d of each head.
      const float factor = static_cast<float>(1.0 - c.lambda_init(l));
      rmsnorm_forward(att_, w.subln, att_final_, sub_rstd_, H, 2 * d, eps);
      for (int64_t i = 0; i < a.out_width(); ++i) att_final_[i] *= factor;
      o_in = att_final_;
    }
    gemv(w.o_proj, o_in, x_, D, a.out_width(), /*accumulate=*/true);
    // MLP block (paper Eq. 5), x += SwiGLU(RMSNorm(x)).
    rmsnorm_forward(x_, w.post_norm, h_, &rstd_, 1, D, eps);
    gemv(w.gate_proj, h_, gate_, F, D);
    gemv(w.up_proj, h_, up_, F, D);
    swiglu_forward(gate_, up_, act_, F);
    gemv(w.down_proj, act_, x_, D, F, /*accumulate=*/true);
  }
  rmsnorm_forward(x_, model_.tensors.final_norm, h_, &rstd_, 1, D, eps);
  gemv(model_.tensors.lm_head, h_, logits_, c.vocab_size, D);
  cache_.length = pos + 1;
  return logits_;
}

}  // namespace difftx
