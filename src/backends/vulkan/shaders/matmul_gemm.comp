// y[n, col] (= or +=) x[n, :] . W[col, :] in tiles of 64 rows of x by 64 weight rows: the prefill
// GEMM. Each tile stages 32 columns of x and of the weights (widened to F32) in shared memory;
// each thread owns a 4 x 4 block of outputs, each output one FMA chain over the columns in
// order, so its bits depend on its x row and weight row alone, wherever the tile puts them (the
// gemm order).
#version 450
#include "common.glsl"

#define BM 64
#define BN 64
#define BK 32
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer WBuffer { uint w[]; } W;
layout(std430, set = 0, binding = 1) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 2) buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint w_byte, row_bytes, rows, cols;  // as matmul_gemv.comp
  uint x_at, y_at, y_stride, n;        // n: rows of x
  uint accumulate;
} p;

#include "weights.glsl"

shared float xs[BK][BM + 1];  // xs[k][m]: x tile, transposed
shared float ws[BK][BN + 1];  // ws[k][c]: weight tile, transposed

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint c0 = gl_WorkGroupID.x * BN, m0 = gl_WorkGroupID.y * BM;
  const uint tc = (t % 16u) * 4u, tm = (t / 16u) * 4u;  // this thread's 4 outputs in each direction
  const uint load_row = t / 4u, load_k = (t % 4u) * 8u;  // this thread's 8 values of each tile
  float acc[4][4];
  [[unroll]] for (uint i = 0u; i < 4u; ++i)
    [[unroll]] for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
    const uint k = k0 + load_k;
    const uint m = m0 + load_row;
    [[unroll]] for (uint j = 0u; j < 8u; ++j)
      xs[load_k + j][load_row] = m < p.n && k + j < p.cols ? X.x[p.x_at + m * p.cols + k + j] : 0.0;
    const uint c = c0 + load_row;
    float w[8];
    if (c < p.rows && k < p.cols) {
      dequant8(p.w_byte + c * p.row_bytes, k, p.cols, w);
    } else {
      [[unroll]] for (uint j = 0u; j < 8u; ++j) w[j] = 0.0;
    }
    [[unroll]] for (uint j = 0u; j < 8u; ++j) ws[load_k + j][load_row] = w[j];
    barrier();
    [[unroll]] for (uint kk = 0u; kk < BK; ++kk) {
      float a[4], b[4];
      [[unroll]] for (uint i = 0u; i < 4u; ++i) a[i] = xs[kk][tm + i];
      [[unroll]] for (uint j = 0u; j < 4u; ++j) b[j] = ws[kk][tc + j];
      [[unroll]] for (uint i = 0u; i < 4u; ++i)
        [[unroll]] for (uint j = 0u; j < 4u; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    const uint m = m0 + tm + i;
    if (m >= p.n) continue;
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      const uint c = c0 + tc + j;
      if (c >= p.rows) continue;
      const uint at = p.y_at + m * p.y_stride + c;
      Y.y[at] = p.accumulate != 0u ? Y.y[at] + acc[i][j] : acc[i][j];
    }
  }
}
