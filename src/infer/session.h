// Incremental decoding of one sequence: the prompt goes through the fused training kernels
// (decoder_forward) in one prefill, its keys and values into the KV cache; each further token
// is one decode step of GEMVs and single-query attention over the cache. Every buffer the
// decode step touches is planned in the constructor: no allocation per token.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/buffer.h"
#include "kernels/attention/decode_attention.h"
#include "infer/kv_cache.h"
#include "kernels/ops.h"
#include "model/model.h"

namespace difftx {

class InferenceSession {
 public:
  // context: the cache's capacity in tokens, in [1, max_position_embeddings]; 0 picks
  // max_position_embeddings. The model must outlive the session.
  explicit InferenceSession(const Model& model, int64_t context = 0);

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
  const Model& model_;
  KVCache cache_;
  DecodeAttentionDims attention_;
  DecodeAttentionScratch attention_scratch_;
  Buffer<float> rope_storage_;
  RopeTable rope_;
  std::vector<float> diff_lambda_;  // diff: each layer's lambda (Eq. 2), fixed per model
  // One token's activations.
  Buffer<float> arena_;
  float *x_, *h_, *q_, *k_, *v_, *lambda_logits_, *att_, *att_final_, *sub_rstd_, *gate_, *up_, *act_, *logits_;
  float rstd_ = 0;
};

}  // namespace difftx
