#include "infer/session.h"

#include "core/arena_plan.h"
#include "core/error.h"
#include "model/activations.h"
#include "model/decoder.h"

namespace difftx {
namespace {

// Prefill: the fused attention over the prompt, whose keys and values then go to the cache.
class PrefillAttention : public BatchAttention {
 public:
  PrefillAttention(const AttentionDims& dims, KVCache& cache) : BatchAttention(dims, 0), cache_(cache), tokens_(dims.T) {}
  void attend(int64_t layer, LayerActivations& s, const float* lambda) override {
    BatchAttention::attend(layer, s, lambda);
    cache_.store(layer, 0, tokens_, s.k, s.v);
  }

 private:
  KVCache& cache_;
  int64_t tokens_;
};

}  // namespace

void InferenceSession::CacheAttention::attend(int64_t layer, LayerActivations& s, const float* lambda) {
  cache.store(layer, position, 1, s.k, s.v);
  decode_attention(cache.dims, position + 1, s.q, cache.keys(layer), cache.values(layer), lambda, s.att, scratch);
}

InferenceSession::InferenceSession(const Model& model, int64_t context, KvStorage kv)
    : model_(model),
      cache_(model.config, context > 0 ? context : model.config.max_position_embeddings, kv),
      attention_scratch_(cache_.dims) {
  const ModelConfig& c = model.config;
  rope_storage_.resize(rope_table_floats(cache_.capacity, c.head_dim));
  rope_ = rope_table_build(rope_storage_.data(), cache_.capacity, c.head_dim, c.rope_theta, c.rope_scaling);

  const AttentionVariant a = c.attention_variant();
  const int64_t D = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads;
  LayerActivations& s = token_;
  float** slots[] = {&s.x, &s.h1, &s.rstd1, &s.q, &s.k, &s.v, &s.lambda_logits, &s.att, &s.att_final, &s.sub_rstd,
                     &s.y, &s.h2, &s.rstd2, &s.gate, &s.up, &s.act, &head_norm_gain_, &logits_};
  const int64_t sizes[] = {D, D, 1, a.q_width(), a.k_width(), a.v_width(), H, a.out_width(), a.out_width(), H,
                           D, D, 1, F, F, F, 2 * c.head_dim, c.vocab_size};
  ArenaPlan plan;
  int64_t offsets[std::size(sizes)];
  for (size_t i = 0; i < std::size(sizes); ++i) offsets[i] = plan.reserve(sizes[i]);
  arena_.resize(plan.size());
  for (size_t i = 0; i < std::size(sizes); ++i) *slots[i] = arena_.data() + offsets[i];
  if (!c.has_head_norm()) s.att_final = s.att;
}

const float* InferenceSession::prefill(std::span<const int32_t> tokens) {
  const ModelConfig& c = model_.config;
  const int64_t n = static_cast<int64_t>(tokens.size()), D = c.hidden_size;
  DIFFTX_CHECK(cache_.length == 0, "prefill: the cache already holds ", cache_.length,
               " tokens (prefill starts a sequence; call reset() or decode())");
  DIFFTX_CHECK(n >= 1, "prefill: the prompt has no tokens");
  DIFFTX_CHECK(n <= cache_.capacity, "prompt of ", n, " tokens is longer than the context of ", cache_.capacity,
               " tokens");
  Activations acts(c, 1, n, ActivationUse::forward_only);
  PrefillAttention attention(c.attention_dims(1, n), cache_);
  decoder_forward(model_, acts, tokens.data(), {}, &attention);
  linear(model_.matrices.lm_head, acts.h_final + (n - 1) * D, logits_, 1);
  cache_.length = n;
  return logits_;
}

const float* InferenceSession::decode(int32_t token) {
  const ModelConfig& c = model_.config;
  const int64_t pos = cache_.length, D = c.hidden_size;
  DIFFTX_CHECK(pos < cache_.capacity, "context full: all ", cache_.capacity,
               " positions of the KV cache are used (max_position_embeddings ", c.max_position_embeddings,
               ", or a smaller --context)");
  LayerActivations& s = token_;
  embed_tokens(model_.matrices.embed, &token, s.x, 1);
  CacheAttention attention{cache_, attention_scratch_, pos};
  const LayerPass pass{c, 1, 1, pos, rope_, head_norm_gain_};
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerTensors& w = model_.tensors.layers[l];
    const LayerMatrices& m = model_.matrices.layers[l];
    attention_block_forward(pass, w, m, l, s, attention);
    mlp_block_forward(pass, w, m, s, s.x);  // the next layer's input
  }
  rmsnorm_forward(s.x, model_.tensors.final_norm, s.h1, s.rstd1, 1, D, static_cast<float>(c.rms_norm_eps));
  linear(model_.matrices.lm_head, s.h1, logits_, 1);
  cache_.length = pos + 1;
  return logits_;
}

}  // namespace difftx
