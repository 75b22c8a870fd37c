// Paged split-K decode attention, first pass (decode_attention.h): one workgroup per (row, kv
// head, chunk of CHUNK positions) scores the row's query against the chunk's keys for every map
// of the kv head and keeps, per map, the running max, the sum and the unnormalised output: an
// item of M (vw + 2) floats that paged_merge.comp combines. Positions come WG at a time, a
// thread's key each, in passes that end on multiples of WG whatever the pages (pages are often
// smaller: every thread scores at once), so a row's chunks and passes depend on its length
// alone: its bits never depend on the other rows or on where its blocks lie. A pass's keys are
// read in runs of pages whose regions share a binding window (a uniform index into kv[]), its
// values a page at a time; keys' elements and values' positions are loaded LOADS at a time before
// their products, which stay one chain in order (the bits do not depend on LOADS).
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
#define LOADS 8u    // loads in flight per thread before their products
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
shared float alpha[MMAX], pass_max[MMAX];

float element(uint win, uint at) {  // one cached element at byte `at`, widened (INT8: unscaled)
  const uint word = kv[win].w[at >> 2];
  if (p.storage == 0u) return uintBitsToFloat(word);
  if (p.storage == 1u) return bf16_low(word >> ((at & 2u) << 3));
  return float(bitfieldExtract(int(word), int((at & 3u) << 3), 8));
}
float scale_at(uint win, uint at) { return uintBitsToFloat(kv[win].w[at >> 2]); }
uint block_of(uint table, uint pos) { return uint(Blocks.i[p.blocks_at + table + pos / p.P]); }

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

  for (uint pass = max(c0, first); pass < c1;) {
    const uint end = min(c1, (pass / WG + 1u) * WG), n = end - pass, pos = pass + t;
    for (uint run = pass; run < end;) {  // the same runs in every thread
      const uint win = kv_region(block_of(table, run)).x;
      uint run_end = min(end, (run / p.P + 1u) * p.P);
      while (run_end < end && kv_region(block_of(table, run_end)).x == win) run_end = min(end, run_end + p.P);
      if (pos >= run && pos < run_end) {
        const uint base = kv_region(block_of(table, pos)).y, tt = pos % p.P;
        for (uint m = 0u; m < M; ++m) {
          const uint map = g * M + m;
          const uint kh = p.v1 != 0u && map % (p.r + 1u) == p.r ? 1u : 0u;  // V1 noise maps read k2
          // The key's elements loaded LOADS at a time before their products (a GPU thread keeps
          // them in flight together), the products one chain in element order.
          float s = 0.0;
          uint x = 0u;
          for (; x + LOADS <= d; x += LOADS) {
            float k[LOADS];
            [[unroll]] for (uint j = 0u; j < LOADS; ++j)
              k[j] = element(win, base + kv_key_element(g, tt, kh * d + x + j) * es);
            [[unroll]] for (uint j = 0u; j < LOADS; ++j) s = fma(qs[m * d + x + j], k[j], s);
          }
          for (; x < d; ++x) s = fma(qs[m * d + x], element(win, base + kv_key_element(g, tt, kh * d + x) * es), s);
          if (int8)
            s *= scale_at(win, base + kv_key_element_bytes() + ((g * kv_heads_per_kv() + kh) * p.P + tt) * 4u);
          scores[m * WG + t] = s;
        }
      }
      run = run_end;
    }
    barrier();
    if (t < M) {  // map t's running max over the pass, and how much its old terms shrink
      float mx = run_max;
      for (uint i = 0u; i < n; ++i) mx = max(mx, scores[t * WG + i]);
      alpha[t] = exp(run_max - mx);  // 0 at the first pass (run_max = -inf)
      pass_max[t] = run_max = mx;
    }
    barrier();
    if (t < n)  // every position's exps at once
      for (uint m = 0u; m < M; ++m) scores[m * WG + t] = exp(scores[m * WG + t] - pass_max[m]);
    barrier();
    if (t < M) {  // their sum in position order
      float sum = 0.0;
      for (uint i = 0u; i < n; ++i) sum += scores[t * WG + i];
      run_sum = run_sum * alpha[t] + sum;
    }
    [[unroll]] for (uint j = 0u; j < ACC; ++j) {
      const uint e = t + WG * j;
      if (e >= M * vw) break;
      const uint m = e / vw, col = e % vw;
      float a = acc[j] * alpha[m];
      for (uint i = 0u; i < n;) {  // a page at a time: its values read 4 positions ahead of their use
        const uvec2 region = kv_region(block_of(table, pass + i));
        const uint values = region.y + kv_key_bytes(), tt0 = (pass + i) % p.P, in_page = min(n - i, p.P - tt0);
        for (uint k = 0u; k < in_page; k += LOADS) {
          float w[LOADS], v[LOADS];
          [[unroll]] for (uint q = 0u; q < LOADS; ++q) {
            const uint tt = tt0 + k + q;
            w[q] = v[q] = 0.0;
            if (k + q < in_page) {
              w[q] = scores[m * WG + i + k + q];
              if (int8) w[q] *= scale_at(region.x, values + kv_value_element_bytes() + (g * p.P + tt) * 4u);
              v[q] = element(region.x, values + kv_value_element(g, tt, col) * es);
            }
          }
          [[unroll]] for (uint q = 0u; q < LOADS; ++q)
            if (k + q < in_page) a = fma(w[q], v[q], a);  // in position order, as one chain
        }
        i += in_page;
      }
      acc[j] = a;
    }
    barrier();
    pass = end;
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
