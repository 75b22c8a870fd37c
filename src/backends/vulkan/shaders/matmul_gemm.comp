// y[n, col] (= or +=) x[n, :] . W[col, :] in tiles of BM rows of x by 64 weight rows: the prefill
// GEMM. Each tile stages 32 columns of x and of the weights (widened to F32) in shared memory
// (gemm_staging.glsl: the next columns' loads in flight while these are multiplied);
// each of the 64 threads owns a TM x TN block of outputs (8 x 8 in the 64-row tile: 16 shared-
// memory reads for 64 products; 4 x 4 in the 16-row one), each output one FMA chain over the
// columns in order, so its bits depend on its x row and weight row alone, wherever the tile puts
// them (the gemm order). BM (16 or 64) is one variant each (shaders.cmake): a short prompt's few
// rows do not fill a 64-row tile.
#version 450
#include "common.glsl"

#ifndef BM
#error BM (rows of x a tile takes: 16 or 64) is defined by shaders.cmake
#endif
#define BN 64
#define BK 32
#if BM == 64
#define TM 8u  // rows of outputs a thread owns
#define TN 8u  // and columns
#else
#define TM 4u
#define TN 4u
#endif
#define WG (BM / TM * (BN / TN))  // threads: 64
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer WBuffer { uint w[]; } W;
layout(std430, set = 0, binding = 1) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer X4Buffer { vec4 x4[]; } X4;
layout(std430, set = 0, binding = 2) buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint w_byte, row_bytes, rows, cols;  // as matmul_gemv.comp
  uint x_at, y_at, y_stride, n;        // n: rows of x
  uint accumulate;
} p;

#include "weights.glsl"

shared float xs[BK][BM + 1];  // xs[k][m]: x tile, transposed
shared float ws[BK][BN + 1];  // ws[k][c]: weight tile, transposed
#define STORE_X(m, k, v) xs[k][m] = v
#define STORE_W(c, k, v) ws[k][c] = v
#include "gemm_staging.glsl"

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint c0 = gl_WorkGroupID.x * BN, m0 = gl_WorkGroupID.y * BM;
  const uint tc = (t % (BN / TN)) * TN, tm = (t / (BN / TN)) * TM;  // this thread's outputs: TM rows, TN columns
  float acc[TM][TN];
  [[unroll]] for (uint i = 0u; i < TM; ++i)
    [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = 0.0;
  load_tiles(m0, c0, 0u);
  for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
    store_tiles(c0, k0);
    barrier();
    if (k0 + BK < p.cols) load_tiles(m0, c0, k0 + BK);  // in flight while this tile is used
    [[dont_unroll]] for (uint kk = 0u; kk < BK; ++kk) {
      float a[TM], b[TN];
      [[unroll]] for (uint i = 0u; i < TM; ++i) a[i] = xs[kk][tm + i];
      [[unroll]] for (uint j = 0u; j < TN; ++j) b[j] = ws[kk][tc + j];
      [[unroll]] for (uint i = 0u; i < TM; ++i)
        [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    const uint m = m0 + tm + i;
    if (m >= p.n) continue;
    [[unroll]] for (uint j = 0u; j < TN; ++j) {
      const uint c = c0 + tc + j;
      if (c >= p.rows) continue;
      const uint at = p.y_at + m * p.y_stride + c;
      Y.y[at] = p.accumulate != 0u ? Y.y[at] + acc[i][j] : acc[i][j];
    }
  }
}
