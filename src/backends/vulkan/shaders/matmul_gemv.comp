// y[n, col] (= or +=) x[n, :] . W[col, :] for up to NMAX rows of x: the decode GEMV. A workgroup
// takes ROWS weight rows, LANES threads each; a row's lanes take its 8-weight units in turn (unit
// u by lane u % LANES), AHEAD units at a time, all loaded before any is used (a decode step's
// small matrices are bound by the memory's latency: each thread keeps AHEAD loads in flight),
// each row of x its own accumulator; then one thread per (weight row, x row) adds the lanes'
// sums in lane order. An output's bits depend on its x row and its weight row alone, never on
// how many rows of x come along or where the row falls (the gemv order). NMAX (1, 2, 4, 8 or 16)
// is one variant each (shaders.cmake): a single decode row must not pay for 16 accumulators.
#version 450
#include "common.glsl"

#define ROWS 4
#define LANES 16
#define WG (ROWS * LANES)
#define AHEAD 4
#ifndef NMAX
#error NMAX (rows of x, at most 16) is defined by shaders.cmake
#endif
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

// acc[i] += x[i, k .. k + 7] . w for the rows of x.
void add_unit(inout float acc[NMAX], const float w[8], uint k) {
  const uint valid = min(8u, p.cols - k);  // 8 except in a float row's last unit
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

void main() {
  const uint t = gl_LocalInvocationID.x, lane = t % LANES;
  const uint r = group_index() * ROWS + t / LANES;  // this thread's weight row
  float acc[NMAX];
  [[unroll]] for (uint i = 0u; i < NMAX; ++i) acc[i] = 0.0;
  if (r < p.rows) {
    const uint row = p.w_byte + r * p.row_bytes;
    const uint units = (p.cols + 7u) / 8u;
    uint u = lane;
    for (; u + (AHEAD - 1u) * LANES < units; u += AHEAD * LANES) {
      float w[AHEAD][8];
      [[unroll]] for (uint a = 0u; a < AHEAD; ++a) dequant8(row, 8u * (u + a * LANES), p.cols, w[a]);
      [[unroll]] for (uint a = 0u; a < AHEAD; ++a) add_unit(acc, w[a], 8u * (u + a * LANES));
    }
    for (; u < units; u += LANES) {
      float w[8];
      dequant8(row, 8u * u, p.cols, w);
      add_unit(acc, w, 8u * u);
    }
  }
  [[unroll]] for (uint i = 0u; i < NMAX; ++i)
    if (i < p.n) partial[i][t] = acc[i];
  barrier();
  // Thread t < ROWS * NMAX adds the lanes of weight row t / NMAX (of the workgroup's ROWS) for x
  // row t % NMAX.
  const uint slot = t / NMAX, i = t % NMAX, out_row = group_index() * ROWS + slot;
  if (t < ROWS * NMAX && i < p.n && out_row < p.rows) {
    float sum = 0.0;
    for (uint l = 0u; l < LANES; ++l) sum += partial[i][slot * LANES + l];
    const uint at = p.y_at + i * p.y_stride + out_row;
    Y.y[at] = p.accumulate != 0u ? Y.y[at] + sum : sum;
  }
}
