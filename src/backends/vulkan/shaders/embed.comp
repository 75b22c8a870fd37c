// out[i] = row tokens[i] of the embedding table E widened to F32, one workgroup per token. The
// table may be larger than one binding: the host dispatches once per window of rows
// [row0, row0 + rows), and a token outside the window is left to the window that holds it (one
// outside the whole table, which the caller has ruled out, gets NaN from the first window).
#version 450
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer WBuffer { uint w[]; } W;
layout(std430, set = 0, binding = 1) readonly buffer TokenBuffer { int ids[]; } Tokens;
layout(std430, set = 0, binding = 2) writeonly buffer OutBuffer { float y[]; } Out;
layout(push_constant) uniform Push {
  uint w_byte, row_bytes, cols;
  uint row0, rows, table_rows;  // this window's rows, and the whole table's
  uint ids_at, out_at, n;
} p;

#include "weights.glsl"

void main() {
  const uint i = group_index();
  if (i >= p.n) return;
  const int id = Tokens.ids[p.ids_at + i];
  const uint dst = p.out_at + i * p.cols;
  if (id < 0 || uint(id) >= p.table_rows) {
    if (p.row0 == 0u)
      for (uint k = gl_LocalInvocationID.x; k < p.cols; k += 64u) Out.y[dst + k] = uintBitsToFloat(0x7fc00000u);
    return;
  }
  if (uint(id) < p.row0 || uint(id) >= p.row0 + p.rows) return;
  const uint row = p.w_byte + (uint(id) - p.row0) * p.row_bytes;
  for (uint u = gl_LocalInvocationID.x; 8u * u < p.cols; u += 64u) {
    float w[8];
    dequant8(row, 8u * u, p.cols, w);
    [[unroll]] for (uint j = 0u; j < 8u; ++j)
      if (8u * u + j < p.cols) Out.y[dst + 8u * u + j] = w[j];
  }
}
