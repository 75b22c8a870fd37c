// RoPE (kernels/ops.h) in place on x [rows, heads * d]: the pair i of each head rotated by the
// table's angle at the row's position, cos/sin [max_T, d / 2]; sign -1 rotates back. Positions:
// pos0 + row % T, or positions[row] (int64: its two words). A position outside the table (the
// caller checks; negative or past 2^32 among them) writes NaN rather than reading outside it.
#version 450
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer CosBuffer { float c[]; } Cos;
layout(std430, set = 0, binding = 2) readonly buffer SinBuffer { float s[]; } Sin;
layout(std430, set = 0, binding = 3) readonly buffer PosBuffer { uint words[]; } Pos;
layout(push_constant) uniform Push {
  uint x_at, cos_at, sin_at, pos_at;
  uint rows, heads, d, T, pos0, max_T;
  uint use_positions, half_style;
  float sign;
} p;

void main() {
  const uint half_ = p.d / 2u;
  const uint id = group_index() * 256u + gl_LocalInvocationID.x;
  if (id >= p.rows * p.heads * half_) return;
  const uint i = id % half_, head = (id / half_) % p.heads, row = id / (half_ * p.heads);
  uint pos = p.pos0 + row % p.T;
  if (p.use_positions != 0u) {  // a high word (negative, or 2^32 and more): past every table
    const uint at = p.pos_at + 2u * row;
    pos = Pos.words[at + 1u] != 0u ? 0xffffffffu : Pos.words[at];
  }
  const uint base = p.x_at + row * p.heads * p.d + head * p.d;
  const uint ia = p.half_style != 0u ? base + i : base + 2u * i;
  const uint ib = p.half_style != 0u ? base + i + half_ : base + 2u * i + 1u;
  if (pos >= p.max_T) {
    X.x[ia] = X.x[ib] = uintBitsToFloat(0x7fc00000u);
    return;
  }
  const float c = Cos.c[p.cos_at + pos * half_ + i], s = p.sign * Sin.s[p.sin_at + pos * half_ + i];
  const float a = X.x[ia], b = X.x[ib];
  X.x[ia] = a * c - b * s;
  X.x[ib] = b * c + a * s;
}
