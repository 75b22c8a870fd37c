// The KV cache's byte layout and its one writer (decode_attention.h): elements in the cache's
// storage type, then, for INT8, one scale per key head row and per value row.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/enum_names.h"
#include "core/error.h"
#include "io/float16.h"
#include "kernels/attention/decode_attention.h"

namespace difftx::kernels {
namespace {

int64_t whole_lines(int64_t bytes) { return (bytes + 63) / 64 * 64; }  // each part 64-byte aligned

int64_t key_element_bytes(const DecodeAttentionDims& a) {
  return whole_lines(key_elements(a) * kv_element_bytes(a.storage));
}
int64_t value_element_bytes(const DecodeAttentionDims& a) {
  return whole_lines(a.Hkv * a.capacity * a.value_width() * kv_element_bytes(a.storage));
}
int64_t key_rows(const DecodeAttentionDims& a) { return a.Hkv * a.key_heads_per_kv_head(); }

// n F32 values into storage elements at element index i (dst element stride `stride`), with
// INT8's scale (ignored otherwise): round(x / scale), scale = absmax / 127 over the n values.
void put(KvStorage storage, void* base, int64_t i, int64_t stride, const float* src, int64_t n, float* scale) {
  switch (storage) {
    case KvStorage::f32:
      for (int64_t x = 0; x < n; ++x) static_cast<float*>(base)[i + x * stride] = src[x];
      return;
    case KvStorage::bf16:
      for (int64_t x = 0; x < n; ++x) static_cast<uint16_t*>(base)[i + x * stride] = io::float_to_bf16(src[x]);
      return;
    case KvStorage::int8: {
      float absmax = 0;
      for (int64_t x = 0; x < n; ++x) absmax = std::max(absmax, std::fabs(src[x]));
      *scale = absmax / 127.0f;
      const float inv = absmax > 0 ? 127.0f / absmax : 0.0f;
      for (int64_t x = 0; x < n; ++x)
        static_cast<int8_t*>(base)[i + x * stride] =
            static_cast<int8_t>(std::clamp(std::nearbyint(src[x] * inv), -127.0f, 127.0f));
      return;
    }
  }
}

constexpr EnumName<KvStorage> kKvStorageNames[] = {
    {KvStorage::f32, "f32"}, {KvStorage::bf16, "bf16"}, {KvStorage::int8, "int8"}};

}  // namespace

const char* kv_storage_name(KvStorage storage) { return name_of(kKvStorageNames, storage); }

KvStorage parse_kv_storage(const std::string& name) {
  if (const std::optional<KvStorage> s = value_named(kKvStorageNames, name)) return *s;
  fail("KV cache storage '", name.substr(0, 64), "': expected f32, bf16 or int8");
}

int64_t key_region_bytes(const DecodeAttentionDims& a) {
  const int64_t scales = a.storage == KvStorage::int8 ? key_rows(a) * scale_stride(a) : 0;
  return key_element_bytes(a) + whole_lines(scales * int64_t{sizeof(float)});
}

int64_t value_region_bytes(const DecodeAttentionDims& a) {
  const int64_t scales = a.storage == KvStorage::int8 ? a.Hkv * scale_stride(a) : 0;
  return value_element_bytes(a) + whole_lines(scales * int64_t{sizeof(float)});
}

const float* key_scales(const DecodeAttentionDims& a, const void* keys) {
  DIFFTX_CHECK(a.storage == KvStorage::int8, "KV cache: only an int8 cache has scales");
  return reinterpret_cast<const float*>(static_cast<const unsigned char*>(keys) + key_element_bytes(a));
}

const float* value_scales(const DecodeAttentionDims& a, const void* values) {
  DIFFTX_CHECK(a.storage == KvStorage::int8, "KV cache: only an int8 cache has scales");
  return reinterpret_cast<const float*>(static_cast<const unsigned char*>(values) + value_element_bytes(a));
}

void store_kv(const DecodeAttentionDims& a, void* keys, void* values, int64_t pos, int64_t n, const float* k,
              const float* v) {
  const int64_t kw = a.key_width(), vw = a.value_width(), d = a.d, heads = a.key_heads_per_kv_head();
  const bool scaled = a.storage == KvStorage::int8;
  float* ks = scaled ? const_cast<float*>(key_scales(a, keys)) : nullptr;
  float* vs = scaled ? const_cast<float*>(value_scales(a, values)) : nullptr;
  float unused = 0;
  for (int64_t t = pos; t < pos + n; ++t)
    for (int64_t g = 0; g < a.Hkv; ++g) {
      const float* kt = k + ((t - pos) * a.Hkv + g) * kw;
      for (int64_t h = 0; h < heads; ++h)  // a key head row: d elements down one tile column
        put(a.storage, keys, key_offset(a, g, t, h * d), kKeyTile, kt + h * d, d,
            scaled ? &ks[(g * heads + h) * scale_stride(a) + t] : &unused);
      put(a.storage, values, (g * a.capacity + t) * vw, 1, v + ((t - pos) * a.Hkv + g) * vw, vw,
          scaled ? &vs[g * scale_stride(a) + t] : &unused);
    }
}

}  // namespace difftx::kernels
