// Paged split-K decode attention, second pass: per (row, output head), the chunks of its maps
// (paged_attention.comp) combined by log-sum-exp in chunk order, then signal - w * noise for the
// paired variants (w: the layer's lambda, or sigmoid of the row's logit for diff2). With a window,
// the row's items start at the chunk its window starts in, as paged_attention.comp writes them.
// A row whose length is outside [1, max_length] (the CPU backend's error) is written as NaN.
// The items' statistics are loaded at once, a thread an item, and each column's outputs LOADS
// items at a time: a row split into many chunks waits on memory a few times, not twice an item.
#version 450
#include "common.glsl"

#define WG 64
#define MAX_ITEMS 128  // ops_attention.cpp kMaxDecodeItems + 1 (a window's extra chunk) at most
#define LOADS 8u
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer PartBuffer { float f[]; } Part;
layout(std430, set = 0, binding = 1) readonly buffer LengthBuffer { int i[]; } Lengths;
layout(std430, set = 0, binding = 2) readonly buffer LBuffer { float l[]; } Lambda;
layout(std430, set = 0, binding = 3) writeonly buffer OBuffer { float o[]; } Out;
layout(push_constant) uniform Push {
  uint Hkv, M, vw, H, r, kind;  // kind: 0 baseline, 1 diff, 2 diff2, 3 diff_grouped
  uint lengths_at, lambda_at, out_at, out_width;
  uint part_at, min_chunk, max_items, max_chunks, count;
  uint window;  // 0: every position
  uint max_length;
} p;

#include "decode_chunk.glsl"

shared float weight[2][MAX_ITEMS];  // per map (signal, noise) and item: exp(its max - the max)
shared float total[2];              // per map: the items' sums so weighted, in item order

uint first_item(uint row, uint map) {
  return p.part_at + (row * p.Hkv + map / p.M) * p.max_chunks * p.M * (p.vw + 2u);
}
// Map `map`'s weights and total over the row's items (every thread of the workgroup calls it).
void weigh(uint row, uint map, uint items, uint slot) {
  const uint first = first_item(row, map), m = map % p.M, stride = p.M * (p.vw + 2u);
  for (uint c = gl_LocalInvocationID.x; c < items; c += WG) weight[slot][c] = Part.f[first + c * stride + m];
  barrier();
  float mx = uintBitsToFloat(0xff800000u);
  for (uint c = 0u; c < items; ++c) mx = max(mx, weight[slot][c]);
  barrier();  // every thread has its max before the maxima become weights
  for (uint c = gl_LocalInvocationID.x; c < items; c += WG) weight[slot][c] = exp(weight[slot][c] - mx);
  barrier();
  if (gl_LocalInvocationID.x == 0u) {
    float sum = 0.0;
    for (uint c = 0u; c < items; ++c) sum += Part.f[first + c * stride + p.M + m] * weight[slot][c];
    total[slot] = sum;
  }
}
// Map `map`'s output at column col: its items' outputs weighted, in item order, over the total.
float merged(uint row, uint map, uint items, uint slot, uint col) {
  const uint stride = p.M * (p.vw + 2u), at = first_item(row, map) + 2u * p.M + (map % p.M) * p.vw + col;
  float out_ = 0.0;
  uint c = 0u;
  for (; c + LOADS <= items; c += LOADS) {
    float o[LOADS];
    [[unroll]] for (uint j = 0u; j < LOADS; ++j) o[j] = Part.f[at + (c + j) * stride];
    [[unroll]] for (uint j = 0u; j < LOADS; ++j) out_ += o[j] * weight[slot][c + j];
  }
  for (; c < items; ++c) out_ += Part.f[at + c * stride] * weight[slot][c];
  return out_ / total[slot];
}

void main() {
  const uint id = group_index();
  if (id >= p.count * p.H) return;
  const uint row = id / p.H, head = id % p.H;
  const int given = Lengths.i[p.lengths_at + row];
  if (given < 1 || uint(given) > p.max_length) {  // no chunks planned for it: none is read
    for (uint col = gl_LocalInvocationID.x; col < p.vw; col += WG)
      Out.o[p.out_at + row * p.out_width + head * p.vw + col] = uintBitsToFloat(0x7fc00000u);
    return;
  }
  const uint length = uint(given), chunk = decode_chunk(length);
  const uint items = (length + chunk - 1u) / chunk - window_start(length) / chunk;
  const bool paired = p.kind != 0u;
  const uint signal = paired ? head / p.r * (p.r + 1u) + head % p.r : head, noise = head / p.r * (p.r + 1u) + p.r;
  float w = 0.0;
  if (p.kind == 1u || p.kind == 3u) w = Lambda.l[p.lambda_at];
  else if (p.kind == 2u) w = sigmoid(Lambda.l[p.lambda_at + row * p.H + head]);
  weigh(row, signal, items, 0u);
  if (paired) weigh(row, noise, items, 1u);
  barrier();
  for (uint col = gl_LocalInvocationID.x; col < p.vw; col += WG) {
    float v = merged(row, signal, items, 0u, col);
    if (paired) v -= w * merged(row, noise, items, 1u, col);
    Out.o[p.out_at + row * p.out_width + head * p.vw + col] = v;
  }
}
