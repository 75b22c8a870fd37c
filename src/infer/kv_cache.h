// The key/value cache of incremental decoding: per layer, the post-RoPE keys and the values of
// every position so far, preallocated for `capacity` tokens, in the layout single-query
// attention reads (decode_attention.h): keys in transposed tiles of 16 positions, values
// [Hkv][capacity][width], as F32, BF16 or INT8 with scales (KvStorage). Per kv head and token it stores the
// variant's key_width and value_width (variant.h; V2 stores exactly what a baseline with the
// same kv heads stores).
#pragma once
#include <cstdint>

#include "core/buffer.h"
#include "kernels/attention/decode_attention.h"
#include "model/config.h"

namespace difftx {

struct KVCache {
  // capacity: tokens, at least 1 and at most config.max_position_embeddings.
  KVCache(const ModelConfig& config, int64_t capacity, KvStorage storage = KvStorage::f32);

  int64_t capacity;
  int64_t length = 0;  // positions stored (the same for every layer once a step completes)
  int64_t layers, kv_heads;
  int64_t key_width, value_width;  // per kv head and token

  DecodeAttentionDims dims;  // the layout's shape (capacity and storage included)

  // One layer's keys and values in the layout of decode_attention.h (key_region_bytes).
  const void* keys(int64_t layer) const { return storage_.data() + layer * layer_bytes(); }
  const void* values(int64_t layer) const { return storage_.data() + layer * layer_bytes() + key_bytes(); }

  // Stores n tokens of one layer at positions [pos, pos + n), from token-major rows as the
  // projections produce them: k [n, Hkv * key_width] (after RoPE), v [n, Hkv * value_width].
  // Positions past the capacity are an error naming the capacity.
  void store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v);

  // Cache elements per token over all layers (keys and values), and the bytes the whole cache
  // holds per token of its capacity (INT8's scales included).
  int64_t elements_per_token() const { return layers * kv_heads * (key_width + value_width); }
  double bytes_per_token() const { return static_cast<double>(layers * layer_bytes()) / capacity; }

 private:
  int64_t key_bytes() const { return key_region_bytes(dims); }
  int64_t layer_bytes() const { return key_bytes() + value_region_bytes(dims); }
  Buffer<unsigned char> storage_;
};

}  // namespace difftx
