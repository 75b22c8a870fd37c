// Paged split-K decode attention, second pass: per (row, output head), the chunks of its maps
// (paged_attention.comp) combined by log-sum-exp in chunk order, then signal - w * noise for the
// paired variants (w: the layer's lambda, or sigmoid of the row's logit for diff2). With a window,
// the row's items start at the chunk its window starts in, as paged_attention.comp writes them.
// A row whose length is outside [1, max_length] (the CPU backend's error) is written as NaN.
#version 450
#include "common.glsl"

#define WG 64
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer PartBuffer { float f[]; } Part;
layout(std430, set = 0, binding = 1) readonly buffer LengthBuffer { int i[]; } Lengths;
layout(std430, set = 0, binding = 2) readonly buffer LBuffer { float l[]; } Lambda;
layout(std430, set = 0, binding = 3) writeonly buffer OBuffer { float o[]; } Out;
layout(push_constant) uniform Push {
  uint Hkv, M, vw, H, r, kind;  // kind: 0 baseline, 1 diff, 2 diff2, 3 diff_grouped
  uint lengths_at, lambda_at, out_at, out_width;
  uint part_at, chunk, max_chunks, count;
  uint window;  // 0: every position
  uint max_length;
} p;

// Map `map`'s output at column col over the row's chunks.
float merged(uint row, uint map, uint chunks, uint col) {
  const uint g = map / p.M, m = map % p.M, stride = p.M * (p.vw + 2u);
  const uint first = p.part_at + (row * p.Hkv + g) * p.max_chunks * stride;
  float mx = uintBitsToFloat(0xff800000u);
  for (uint c = 0u; c < chunks; ++c) mx = max(mx, Part.f[first + c * stride + m]);
  float sum = 0.0, out_ = 0.0;
  for (uint c = 0u; c < chunks; ++c) {
    const uint item = first + c * stride;
    const float e = exp(Part.f[item + m] - mx);
    sum += Part.f[item + p.M + m] * e;
    out_ += Part.f[item + 2u * p.M + m * p.vw + col] * e;
  }
  return out_ / sum;
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
  const uint length = uint(given);
  const uint first = p.window > 0u && length > p.window ? length - p.window : 0u;
  const uint chunks = (length + p.chunk - 1u) / p.chunk - first / p.chunk;
  const bool paired = p.kind != 0u;
  const uint signal = paired ? head / p.r * (p.r + 1u) + head % p.r : head, noise = head / p.r * (p.r + 1u) + p.r;
  float w = 0.0;
  if (p.kind == 1u || p.kind == 3u) w = Lambda.l[p.lambda_at];
  else if (p.kind == 2u) w = sigmoid(Lambda.l[p.lambda_at + row * p.H + head]);
  for (uint col = gl_LocalInvocationID.x; col < p.vw; col += WG) {
    float v = merged(row, signal, chunks, col);
    if (paired) v -= w * merged(row, noise, chunks, col);
    Out.o[p.out_at + row * p.out_width + head * p.vw + col] = v;
  }
}
