#include "infer/kv_cache.h"

#include <cstring>

#include "core/checked.h"
#include "core/error.h"
#include "io/float16.h"

namespace difftx {

namespace {

// n elements from F32 into the cache's storage at dst (element index i).
void put(KvStorage storage, unsigned char* base, int64_t i, const float* src, int64_t n) {
  if (storage == KvStorage::f32) {
    std::memcpy(reinterpret_cast<float*>(base) + i, src, sizeof(float) * n);
    return;
  }
  uint16_t* dst = reinterpret_cast<uint16_t*>(base) + i;
  for (int64_t x = 0; x < n; ++x) dst[x] = float_to_bf16(src[x]);
}

}  // namespace

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
  unsigned char* K = storage_.data() + layer * layer_bytes();
  unsigned char* V = K + key_bytes();
  for (int64_t t = 0; t < n; ++t)
    for (int64_t g = 0; g < kv_heads; ++g) {
      const float* kt = k + (t * kv_heads + g) * key_width;
      for (int64_t x = 0; x < key_width; ++x) put(dims.storage, K, key_offset(dims, g, pos + t, x), kt + x, 1);
      put(dims.storage, V, (g * capacity + pos + t) * value_width, v + (t * kv_heads + g) * value_width, value_width);
    }
}

}  // namespace difftx
