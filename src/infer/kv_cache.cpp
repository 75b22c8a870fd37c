#include "infer/kv_cache.h"

#include <cstring>

#include "core/error.h"

namespace difftx {

KVCache::KVCache(const ModelConfig& config, int64_t capacity_)
    : capacity(capacity_),
      layers(config.num_hidden_layers),
      kv_heads(config.num_key_value_heads),
      key_width(config.attention_variant().key_width()),
      value_width(config.attention_variant().value_width()),
      dims{config.attention_variant(), capacity_} {
  DIFFTX_CHECK(capacity >= 1 && capacity <= config.max_position_embeddings, "KV cache: context ", capacity,
               " must be in [1, max_position_embeddings = ", config.max_position_embeddings, "]");
  storage_.resize(layers * layer_floats());
}

void KVCache::store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v) {
  DIFFTX_CHECK(layer >= 0 && layer < layers, "KV cache: layer ", layer, " is outside [0, ", layers, ")");
  DIFFTX_CHECK(pos >= 0 && n >= 0 && pos + n <= capacity, "KV cache full: positions [", pos, ", ", pos + n,
               ") do not fit its context of ", capacity, " tokens");
  float* K = keys(layer);
  float* V = values(layer);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t g = 0; g < kv_heads; ++g) {
      const float* kt = k + (t * kv_heads + g) * key_width;
      for (int64_t x = 0; x < key_width; ++x) K[key_offset(dims, g, pos + t, x)] = kt[x];
      std::memcpy(V + (g * capacity + pos + t) * value_width, v + (t * kv_heads + g) * value_width,
                  sizeof(float) * value_width);
    }
}

}  // namespace difftx
