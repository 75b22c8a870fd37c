// Incremental decoding of one sequence: the prompt goes through the fused training kernels
// (decoder_forward) in one prefill, its keys and values into the KV cache; each further token
// is one decode step of GEMVs and single-query attention over the cache. Every buffer the
// decode step touches is planned in the constructor: no allocation per token.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "kernels/attention/decode_attention.h"
#include "infer/kv_cache.h"
#include "kernels/ops.h"
#include "model/layer.h"
#include "model/model.h"

namespace difftx {

class InferenceSession {
 public:
  // context: the cache's capacity in tokens, in [1, max_position_embeddings]; 0 picks
  // max_position_embeddings. kv: how the cache stores keys and values (the commands pick BF16;
  // F32 keeps decode equal to the full forward up to float rounding). The model must outlive
  // the session.
  explicit InferenceSession(const Model& model, int64_t context = 0, KvStorage kv = KvStorage::f32);

  // Runs the prompt (at least one token, at most context()) through the fused prefill path;
  // the cache must be empty. Returns the next-token logits after the last prompt token [V].
  const float* prefill(std::span<const int32_t> tokens);
  // Appends one token at position length() and returns the next-token logits [V]. A full
  // cache is an error naming the context.
  const float* decode(int32_t token);

  int64_t length() const { return cache_.length; }
  int64_t context() const { return cache_.capacity; }
  const KVCache& cache() const { return cache_; }
  void reset() { cache_.length = 0; }

 private:
  // The decode step's attention: the new token's keys and values into the cache, its query
  // over every cached position. Made per step: it refers to the session's members.
  struct CacheAttention : AttentionCore {
    CacheAttention(KVCache& c, DecodeAttentionScratch& s, int64_t p) : cache(c), scratch(s), position(p) {}
    void attend(int64_t layer, LayerActivations& s, const float* lambda) override;
    KVCache& cache;
    DecodeAttentionScratch& scratch;
    int64_t position;
  };

  const Model& model_;
  KVCache cache_;
  DecodeAttentionScratch attention_scratch_;
  Buffer<float> rope_storage_;
  RopeTable rope_;
  // One token's activations, the layer's tensors for a batch of one.
  Buffer<float> arena_;
  LayerActivations token_{};
  float *head_norm_gain_, *logits_;
};

}  // namespace difftx
