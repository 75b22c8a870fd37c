// dst[i] = src[rows[i]] for count rows of width floats; a row index outside src (the caller
// checks) gives NaN rather than a read outside it.
#version 450
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer SrcBuffer { float x[]; } Src;
layout(std430, set = 0, binding = 1) readonly buffer RowBuffer { int r[]; } Rows;
layout(std430, set = 0, binding = 2) writeonly buffer DstBuffer { float y[]; } Dst;
layout(push_constant) uniform Push {
  uint src_at, rows_at, dst_at, count, width, src_rows;
} p;

void main() {
  const uint id = group_index() * 256u + gl_LocalInvocationID.x;
  if (id >= p.count * p.width) return;
  const uint i = id / p.width, k = id % p.width;
  const int r = Rows.r[p.rows_at + i];
  Dst.y[p.dst_at + id] =
      r >= 0 && uint(r) < p.src_rows ? Src.x[p.src_at + uint(r) * p.width + k] : uintBitsToFloat(0x7fc00000u);
}
