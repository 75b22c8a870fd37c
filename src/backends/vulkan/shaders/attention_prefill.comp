// Fused causal attention for every variant (kernels/attention/attention.h, variant.h): one
// workgroup per (16 query rows, output head, sequence) runs the head's signal map and, for the
// paired variants, its noise map in the same pass over the keys, each with its own online
// softmax (running max and sum), and writes signal - w * noise. No T x T buffer: keys come 16 at
// a time through shared memory. Optionally the log-sum-exp of each map and the maps' outputs
// before the subtraction (AttentionSaved). window > 0: a sliding window, query t sees keys
// [t - window + 1, t], and the key tiles before the first one any row of the tile sees are skipped.
// A thread accumulates VMAX / 8 columns of each map: a variant per VMAX, so a 64-wide value does
// not carry the registers (and the loop) of a 256-wide one.
#version 450
#include "common.glsl"

#define BR 16    // query rows per workgroup
#define BC 16    // keys per step
#define DMAX 128
#ifndef VMAX
#error VMAX (the value width's bound: 64, 128 or 256, a variant each) is defined by shaders.cmake
#endif
#define WG 128
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer QBuffer { float q[]; } Q;
layout(std430, set = 0, binding = 1) readonly buffer KBuffer { float k[]; } K;
layout(std430, set = 0, binding = 2) readonly buffer VBuffer { float v[]; } V;
layout(std430, set = 0, binding = 3) readonly buffer LBuffer { float l[]; } Lambda;
layout(std430, set = 0, binding = 4) writeonly buffer OBuffer { float o[]; } Out;
layout(std430, set = 0, binding = 5) writeonly buffer SBuffer { float s[]; } Lse;
layout(std430, set = 0, binding = 6) writeonly buffer MBuffer { float m[]; } Maps;
layout(push_constant) uniform Push {
  uint q_at, k_at, v_at, lambda_at, out_at, lse_at, maps_at;
  uint B, T, H, d, r, maps_per_kv, maps, kind;  // kind: 0 baseline, 1 diff, 2 diff2, 3 diff_grouped
  uint q_width, k_width, v_width, out_width, vw;
  uint save;  // write lse and maps_out
  uint window;  // 0: every key up to the query
  float scale;  // 1 / sqrt(d)
} p;

shared float keys[2 * BC * (DMAX + 1)];  // rows d + 1 apart: a tile's keys on different banks
shared float scores[2 * BR * BC];
shared float alpha[2 * BR];
shared float sums[2 * BR];

#define kNegInf uintBitsToFloat(0xff800000u)

void main() {
  const uint tiles = (p.T + BR - 1u) / BR, id = group_index();
  const uint tile = id % tiles, head = (id / tiles) % p.H, b = id / (tiles * p.H);
  if (b >= p.B) return;
  const uint t = gl_LocalInvocationID.x, t0 = tile * BR;
  const bool paired = p.kind != 0u, v1 = p.kind == 1u || p.kind == 3u;
  const uint nmaps = paired ? 2u : 1u;
  uint map[2];
  map[0] = paired ? head / p.r * (p.r + 1u) + head % p.r : head;  // signal map (or the only one)
  map[1] = head / p.r * (p.r + 1u) + p.r;                          // noise map
  const uint g = map[0] / p.maps_per_kv;
  uint key_head[2];
  key_head[0] = v1 ? 2u * g : g;
  key_head[1] = v1 ? 2u * g + 1u : g;
  const uint kend = min(p.T, t0 + BR);
  const uint seq = b * p.T;

  float run_max = kNegInf, run_sum = 0.0;  // threads < nmaps * BR: map t / BR, row t % BR
  const uint rr = t / 8u, lane = t % 8u;    // the accumulating thread's row and column lane
  float acc[2][VMAX / 8];
  [[unroll]] for (uint j = 0u; j < VMAX / 8u; ++j) acc[0][j] = acc[1][j] = 0.0;

  const uint first = p.window > 0u && t0 + 1u > p.window ? t0 + 1u - p.window : 0u;  // row t0's first key
  for (uint k0 = first / BC * BC; k0 < kend; k0 += BC) {
    for (uint e = t; e < nmaps * BC * p.d; e += WG) {
      const uint mi = e / (BC * p.d), c = (e / p.d) % BC, x = e % p.d, key = k0 + c;
      keys[(mi * BC + c) * (p.d + 1u) + x] = key < p.T ? K.k[p.k_at + (seq + key) * p.k_width + key_head[mi] * p.d + x] : 0.0;
    }
    barrier();
    for (uint e = t; e < nmaps * BR * BC; e += WG) {
      const uint mi = e / (BR * BC), i = (e / BC) % BR, c = e % BC, row = t0 + i, key = k0 + c;
      float s = kNegInf;
      if (row < p.T && key <= row && (p.window == 0u || key + p.window > row)) {
        const uint qa = p.q_at + (seq + row) * p.q_width + map[mi] * p.d, ka = (mi * BC + c) * (p.d + 1u);
        s = 0.0;
        for (uint x = 0u; x < p.d; ++x) s = fma(Q.q[qa + x], keys[ka + x], s);
        s *= p.scale;
      }
      scores[e] = s;
    }
    barrier();
    if (t < nmaps * BR) {
      const uint base = t * BC;  // (map t / BR, row t % BR)
      float mx = run_max;
      for (uint c = 0u; c < BC; ++c) mx = max(mx, scores[base + c]);
      float a = 1.0, sum = 0.0;
      if (mx != kNegInf) {
        a = run_max == kNegInf ? 0.0 : exp(run_max - mx);
        for (uint c = 0u; c < BC; ++c) {
          const float s = scores[base + c];
          const float e = s == kNegInf ? 0.0 : exp(s - mx);
          scores[base + c] = e;
          sum += e;
        }
      } else {
        for (uint c = 0u; c < BC; ++c) scores[base + c] = 0.0;
      }
      run_sum = run_sum * a + sum;
      run_max = mx;
      alpha[t] = a;
    }
    barrier();
    const uint cmax = min(BC, p.T - k0);
    [[unroll]] for (uint mi = 0u; mi < 2u; ++mi) {
      if (mi >= nmaps) break;
      const float a = alpha[mi * BR + rr];
      [[unroll]] for (uint j = 0u; j < VMAX / 8u; ++j) acc[mi][j] *= a;
    }
    for (uint c = 0u; c < cmax; ++c) {
      const uint va = p.v_at + (seq + k0 + c) * p.v_width + g * p.vw;
      const float p0 = scores[rr * BC + c], p1 = paired ? scores[(BR + rr) * BC + c] : 0.0;
      [[unroll]] for (uint j = 0u; j < VMAX / 8u; ++j) {
        const uint col = lane + 8u * j;
        if (col < p.vw) {
          const float val = V.v[va + col];
          acc[0][j] = fma(p0, val, acc[0][j]);
          acc[1][j] = fma(p1, val, acc[1][j]);
        }
      }
    }
    barrier();
  }
  if (t < nmaps * BR) {
    sums[t] = run_sum;
    const uint row = t0 + t % BR;
    if (p.save != 0u && row < p.T && (t < BR || head % p.r == 0u))
      Lse.s[p.lse_at + (b * p.maps + map[t / BR]) * p.T + row] = run_max + log(run_sum);
  }
  barrier();
  const uint row = t0 + rr;
  if (row >= p.T) return;
  const float inv0 = 1.0 / sums[rr], inv1 = paired ? 1.0 / sums[BR + rr] : 0.0;
  float w = 0.0;
  if (v1) w = Lambda.l[p.lambda_at];
  else if (paired) w = sigmoid(Lambda.l[p.lambda_at + (seq + row) * p.H + head]);
  const uint oa = p.out_at + (seq + row) * p.out_width + head * p.vw;
  [[unroll]] for (uint j = 0u; j < VMAX / 8u; ++j) {
    const uint col = lane + 8u * j;
    if (col >= p.vw) continue;
    const float s = acc[0][j] * inv0, n = acc[1][j] * inv1;
    Out.o[oa + col] = paired ? s - w * n : s;
    if (p.save != 0u && paired) {
      const uint ma = p.maps_at + ((seq + row) * p.maps) * p.vw + col;
      Maps.m[ma + map[0] * p.vw] = s;
      if (head % p.r == 0u) Maps.m[ma + map[1] * p.vw] = n;
    }
  }
}
