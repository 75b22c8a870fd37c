// The paged KV cache's writer (kernels/attention/kv_layout.cpp store_kv): row i's keys
// k[i] [Hkv * key_width] and values v[i] into position slots[i] % P of block slots[i] / P,
// converted to the cache's storage, one workgroup per (row, kv head); a slot outside the pool's
// blocks is not written. INT8 rows get scale = absmax / 127 and q = round-half-even(x * 127 /
// absmax). BF16 and INT8 elements share words with other positions' (other workgroups'), so they
// are written with atomics.
#version 450
#include "common.glsl"
#include "kv_push.glsl"

#define WG 64
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer SlotBuffer { int s[]; } Slots;
layout(std430, set = 0, binding = 1) readonly buffer KBuffer { float k[]; } Keys;
layout(std430, set = 0, binding = 2) readonly buffer VBuffer { float v[]; } Values;
layout(std430, set = 0, binding = 3) buffer KvBuffer { uint w[]; } kv[KV_WINDOWS];
layout(push_constant) uniform Push {
  KV_PUSH;
  uint slots_at, k_at, v_at, rows;
} p;

#include "kv.glsl"

shared float absmax[WG];

// The row's absmax over n values at src (in K or V), every thread getting it.
float row_absmax(bool keys, uint src, uint n) {
  const uint t = gl_LocalInvocationID.x;
  float m = 0.0;
  for (uint x = t; x < n; x += WG) m = max(m, abs(keys ? Keys.k[src + x] : Values.v[src + x]));
  absmax[t] = m;
  barrier();
  float r = 0.0;  // every thread takes the maximum itself: two barriers in all
  for (uint j = 0u; j < WG; ++j) r = max(r, absmax[j]);
  barrier();      // before absmax is written again
  return r;
}

// One element at byte `at` of window `win`, converted to the storage (inv: INT8's 127 / absmax).
void put(uint win, uint at, float x, float inv) {
  if (p.storage == 0u) {
    kv[win].w[at >> 2] = floatBitsToUint(x);
    return;
  }
  const uint shift = (at & 3u) << 3;
  const uint bits = p.storage == 1u ? float_to_bf16(x)
                                    : uint(int(clamp(roundEven(x * inv), -127.0, 127.0))) & 0xffu;
  const uint mask = (p.storage == 1u ? 0xffffu : 0xffu) << shift;
  atomicAnd(kv[win].w[at >> 2], ~mask);
  atomicOr(kv[win].w[at >> 2], bits << shift);
}

void main() {
  const uint id = group_index();
  if (id >= p.rows * p.Hkv) return;
  const uint i = id / p.Hkv, g = id % p.Hkv, t = gl_LocalInvocationID.x;
  const int given = Slots.s[p.slots_at + i];
  if (given < 0 || uint(given) / p.P >= p.blocks) return;  // outside the pool: never written
  const uint slot = uint(given);
  const uvec2 region = kv_region(slot / p.P);
  const uint win = region.x, base = region.y, pos = slot % p.P, es = kv_element_bytes(), kw = kv_key_width();
  const bool int8 = p.storage == 2u;
  for (uint h = 0u; h < kv_heads_per_kv(); ++h) {  // a key head row: d elements down one tile column
    const uint src = p.k_at + (i * p.Hkv + g) * kw + h * p.d;
    const float m = int8 ? row_absmax(true, src, p.d) : 0.0;
    const float inv = m > 0.0 ? 127.0 / m : 0.0;
    for (uint x = t; x < p.d; x += WG) put(win, base + kv_key_element(g, pos, h * p.d + x) * es, Keys.k[src + x], inv);
    if (int8 && t == 0u)
      kv[win].w[(base + kv_key_element_bytes() + ((g * kv_heads_per_kv() + h) * p.P + pos) * 4u) >> 2] =
          floatBitsToUint(m / 127.0);
  }
  const uint src = p.v_at + (i * p.Hkv + g) * kw, values = base + kv_key_bytes();
  const float m = int8 ? row_absmax(false, src, kw) : 0.0;
  const float inv = m > 0.0 ? 127.0 / m : 0.0;
  for (uint x = t; x < kw; x += WG) put(win, values + kv_value_element(g, pos, x) * es, Values.v[src + x], inv);
  if (int8 && t == 0u)
    kv[win].w[(values + kv_value_element_bytes() + (g * p.P + pos) * 4u) >> 2] = floatBitsToUint(m / 127.0);
}
