// y[n, col] (= or +=) x[n, :] . W[col, :] for up to NMAX rows of x, one weight row per
// workgroup: the decode GEMV. Threads take 8-weight units in turn (unit u by thread u % 64),
// each row of x its own accumulator, then a fixed tree over the threads: an output's bits depend
// on its x row and its weight row alone, never on how many rows of x come along (the gemv order).
#version 450
#include "common.glsl"

#define WG 64
#define NMAX 16
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer WBuffer { uint w[]; } W;
layout(std430, set = 0, binding = 1) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 2) buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint w_byte;     // byte of weight row 0 (of this window) in W's binding
  uint row_bytes;  // bytes of one weight row
  uint rows;       // weight rows in this window: the outputs of one x row
  uint cols;       // the shared width
  uint x_at;       // float of x[0, 0]
  uint y_at;       // float of y[0, first output of the window]
  uint y_stride;   // floats between rows of y
  uint n;          // rows of x (<= NMAX)
  uint accumulate;
} p;

#include "weights.glsl"

shared float partial[NMAX][WG];

void main() {
  const uint r = group_index();
  if (r >= p.rows) return;
  const uint t = gl_LocalInvocationID.x;
  float acc[NMAX];
  [[unroll]] for (uint i = 0u; i < NMAX; ++i) acc[i] = 0.0;
  const uint row = p.w_byte + r * p.row_bytes;
  const uint units = (p.cols + 7u) / 8u;
  for (uint u = t; u < units; u += WG) {
    float w[8];
    dequant8(row, 8u * u, p.cols, w);
    const uint k = 8u * u, valid = min(8u, p.cols - k);  // 8 except in a float row's last unit
    [[unroll]] for (uint i = 0u; i < NMAX; ++i) {
      if (i < p.n) {
        const uint xi = p.x_at + i * p.cols + k;
        float s = 0.0;
        [[unroll]] for (uint j = 0u; j < 8u; ++j)
          if (j < valid) s = fma(w[j], X.x[xi + j], s);
        acc[i] += s;
      }
    }
  }
  [[unroll]] for (uint i = 0u; i < NMAX; ++i)
    if (i < p.n) partial[i][t] = acc[i];
  [[unroll]] for (uint half_ = WG / 2; half_ > 0u; half_ >>= 1) {
    barrier();
    if (t < half_)
      for (uint i = 0u; i < p.n; ++i) partial[i][t] += partial[i][t + half_];
  }
  barrier();
  if (t < p.n) {
    const uint at = p.y_at + t * p.y_stride + r;
    Y.y[at] = p.accumulate != 0u ? Y.y[at] + partial[t][0] : partial[t][0];
  }
}
