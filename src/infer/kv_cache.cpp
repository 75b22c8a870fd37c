#include "infer/kv_cache.h"

#include "core/checked.h"
#include "core/error.h"

namespace difftx {

KVCache::KVCache(const ModelConfig& config, int64_t capacity_, KvStorage storage)
    : capacity(capacity_),
      layers(config.num_hidden_layers),
      kv_heads(config.num_key_value_heads),
      key_width(config.attention_variant().key_width()),
      value_width(config.attention_variant().value_width()),
      dims{config.attention_variant(), capacity_, storage} {
  DIFFTX_CHECK(capacity >= 1 && capacity <= config.max_position_embeddings, "KV cache: context ", capacity,
               " must be in [1, max_position_embeddings = ", config.max_position_embeddings, "]");
  const auto bytes = product_at_most({layers, layer_bytes()}, int64_t{1} << 46);
  DIFFTX_CHECK(bytes.has_value(), "KV cache: ", layers, " layers of ", layer_bytes(), " bytes exceed 64 TiB");
  storage_.resize(*bytes);
}

void KVCache::store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v) {
  DIFFTX_CHECK(layer >= 0 && layer < layers, "KV cache: layer ", layer, " is outside [0, ", layers, ")");
  DIFFTX_CHECK(pos >= 0 && n >= 0 && pos + n <= capacity, "KV cache full: positions [", pos, ", ", pos + n,
               ") do not fit its context of ", capacity, " tokens");
  unsigned char* keys = storage_.data() + layer * layer_bytes();
  store_kv(dims, keys, keys + key_bytes(), pos, n, k, v);
}

}  // namespace difftx
