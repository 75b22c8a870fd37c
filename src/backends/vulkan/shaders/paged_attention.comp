// Paged split-K decode attention, first pass (decode_attention.h): one workgroup per (row, kv
// head, chunk of CHUNK positions) scores the row's query against the chunk's keys for every map
// of the kv head and keeps, per map, the running max, the sum and the unnormalised output: an
// item of M (vw + 2) floats that paged_merge.comp combines. Positions come a page (block) at a
// time, at most 128 at once, so the window a block lies in is the same for the whole workgroup.
// The chunks of a row depend on its length alone: its bits never depend on the other rows.
// window > 0: a row of length n attends to positions [n - window, n) only; its chunks start at the
// one its window starts in (workgroup c takes the row's chunk first / CHUNK + c, and item c), so
// a long row of a sliding layer runs the window's chunks, not its length's, and never reads the
// block entries before them (blocks given back).
#version 450
#include "common.glsl"
#include "kv_push.glsl"

#define WG 128
#define MMAX 32     // maps per kv head
#define QMAX 2048   // M * d
#define ACC 32      // M * vw <= WG * ACC
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer QBuffer { float q[]; } Q;
layout(std430, set = 0, binding = 1) readonly buffer LengthBuffer { int i[]; } Lengths;
layout(std430, set = 0, binding = 2) readonly buffer TableBuffer { int i[]; } Tables;
layout(std430, set = 0, binding = 3) readonly buffer BlockBuffer { int i[]; } Blocks;
layout(std430, set = 0, binding = 4) writeonly buffer PartBuffer { float f[]; } Part;
layout(std430, set = 0, binding = 5) readonly buffer KvBuffer { uint w[]; } kv[KV_WINDOWS];
layout(push_constant) uniform Push {
  KV_PUSH;
  uint M, r, count;                          // maps per kv head, signal maps per noise map, rows
  uint q_at, q_width;
  uint lengths_at, tables_at, blocks_at;
  uint part_at, chunk, max_chunks;
  uint window;                               // 0: every position
  float scale;                               // 1 / sqrt(d)
} p;

#include "kv.glsl"

shared float qs[QMAX];
shared float scores[MMAX * WG];
shared float alpha[MMAX];

float element(uint win, uint at) {  // one cached element at byte `at`, widened (INT8: unscaled)
  const uint word = kv[win].w[at >> 2];
  if (p.storage == 0u) return uintBitsToFloat(word);
  if (p.storage == 1u) return bf16_low(word >> ((at & 2u) << 3));
  return float(bitfieldExtract(int(word), int((at & 3u) << 3), 8));
}
float scale_at(uint win, uint at) { return uintBitsToFloat(kv[win].w[at >> 2]); }

void main() {
  const uint id = group_index();
  const uint row = id / (p.Hkv * p.max_chunks), g = (id / p.max_chunks) % p.Hkv, c = id % p.max_chunks;
  if (row >= p.count) return;
  const uint length = uint(Lengths.i[p.lengths_at + row]);
  const uint first = p.window > 0u && length > p.window ? length - p.window : 0u;
  const uint c0 = (first / p.chunk + c) * p.chunk;
  if (c0 >= length) return;
  const uint c1 = min(length, c0 + p.chunk);
  const uint t = gl_LocalInvocationID.x, M = p.M, d = p.d, vw = kv_key_width(), es = kv_element_bytes();
  const bool int8 = p.storage == 2u;
  for (uint e = t; e < M * d; e += WG) qs[e] = Q.q[p.q_at + row * p.q_width + g * M * d + e] * p.scale;
  float run_max = uintBitsToFloat(0xff800000u), run_sum = 0.0;  // threads < M: map t
  float acc[ACC];
  [[unroll]] for (uint j = 0u; j < ACC; ++j) acc[j] = 0.0;
  const uint table = uint(Tables.i[p.tables_at + row]);
  barrier();

  for (uint pos = max(c0, first); pos < c1;) {
    const uint at = pos % p.P, n = min(min(c1 - pos, p.P - at), WG);
    const uvec2 region = kv_region(uint(Blocks.i[p.blocks_at + table + pos / p.P]));
    const uint win = region.x, base = region.y;
    if (t < n) {
      const uint tt = at + t;
      for (uint m = 0u; m < M; ++m) {
        const uint map = g * M + m;
        const uint kh = p.v1 != 0u && map % (p.r + 1u) == p.r ? 1u : 0u;  // V1 noise maps read k2
        float s = 0.0;
        for (uint x = 0u; x < d; ++x)
          s = fma(qs[m * d + x], element(win, base + kv_key_element(g, tt, kh * d + x) * es), s);
        if (int8) s *= scale_at(win, base + kv_key_element_bytes() + ((g * kv_heads_per_kv() + kh) * p.P + tt) * 4u);
        scores[m * WG + t] = s;
      }
    }
    barrier();
    if (t < M) {
      float mx = run_max;
      for (uint i = 0u; i < n; ++i) mx = max(mx, scores[t * WG + i]);
      const float a = exp(run_max - mx);  // 0 at the first page (run_max = -inf)
      float sum = 0.0;
      for (uint i = 0u; i < n; ++i) {
        const float e = exp(scores[t * WG + i] - mx);
        scores[t * WG + i] = e;
        sum += e;
      }
      run_sum = run_sum * a + sum;
      run_max = mx;
      alpha[t] = a;
    }
    barrier();
    const uint values = base + kv_key_bytes();
    [[unroll]] for (uint j = 0u; j < ACC; ++j) {
      const uint e = t + WG * j;
      if (e >= M * vw) break;
      const uint m = e / vw, col = e % vw;
      float a = acc[j] * alpha[m];
      for (uint i = 0u; i < n; ++i) {
        float w = scores[m * WG + i];
        if (int8) w *= scale_at(win, values + kv_value_element_bytes() + (g * p.P + at + i) * 4u);
        a = fma(w, element(win, values + kv_value_element(g, at + i, col) * es), a);
      }
      acc[j] = a;
    }
    barrier();
    pos += n;
  }
  const uint item = p.part_at + ((row * p.Hkv + g) * p.max_chunks + c) * M * (vw + 2u);
  if (t < M) {
    Part.f[item + t] = run_max;
    Part.f[item + M + t] = run_sum;
  }
  [[unroll]] for (uint j = 0u; j < ACC; ++j) {
    const uint e = t + WG * j;
    if (e < M * vw) Part.f[item + 2u * M + e] = acc[j];
  }
}
