// The prefill GEMM on tensor cores (GL_NV_cooperative_matrix, 16 x 16 x 16, F16 inputs, F32
// accumulation): tiles of 64 rows of x by 64 weight rows, 32 columns at a time, x and the
// widened weights rounded to F16 in shared memory (gemm_staging.glsl: the next columns' loads in
// flight while these are multiplied); four subgroups of 32 each own a 32 x 32
// block as 2 x 2 accumulators. An output's sum runs over the columns in the same order whatever
// the tile holds, so a row's bits depend on that row alone (checked on the GPU by the
// conformance run: bench/gpu/run.sh). Used where the device has the extension, for the types
// other than F32.
#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#include "common.glsl"

#define BM 64
#define BN 64
#define BK 32
#define LD (BK + 8)  // halves between staged rows (80 bytes: loads start 16-byte aligned)
#define LC (BN + 4)  // floats between rows of the result tile
#define WG 128u
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer WBuffer { uint w[]; } W;
layout(std430, set = 0, binding = 1) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer X4Buffer { vec4 x4[]; } X4;
layout(std430, set = 0, binding = 2) buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint w_byte, row_bytes, rows, cols;  // as matmul_gemv.comp
  uint x_at, y_at, y_stride, n;
  uint accumulate;
} p;

#include "weights.glsl"

shared float16_t xs[BM * LD];  // [m][k]
shared float16_t ws[BN * LD];  // [c][k]: the B operand (k by c) stored column-major
shared float cs[BM * LC];      // [m][c]
#define STORE_X(m, k, v) xs[(m) * LD + (k)] = float16_t(v)
#define STORE_W(c, k, v) ws[(c) * LD + (k)] = float16_t(v)
#include "gemm_staging.glsl"

void main() {
  const uint t = gl_LocalInvocationID.x, sg = t / 32u;
  const uint c0 = gl_WorkGroupID.x * BN, m0 = gl_WorkGroupID.y * BM;
  const uint sm = (sg / 2u) * 32u, sc = (sg % 2u) * 32u;  // this subgroup's 32 x 32 block
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[2][2];
  [[unroll]] for (uint i = 0u; i < 2u; ++i)
    [[unroll]] for (uint j = 0u; j < 2u; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  load_tiles(m0, c0, 0u);
  for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
    store_tiles();
    barrier();
    if (k0 + BK < p.cols) load_tiles(m0, c0, k0 + BK);  // in flight while this tile is used
    [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[2], b[2];
      [[unroll]] for (uint i = 0u; i < 2u; ++i) coopMatLoadNV(a[i], xs, (sm + 16u * i) * LD + kk, LD, false);
      [[unroll]] for (uint j = 0u; j < 2u; ++j) coopMatLoadNV(b[j], ws, (sc + 16u * j) * LD + kk, LD, true);
      [[unroll]] for (uint i = 0u; i < 2u; ++i)
        [[unroll]] for (uint j = 0u; j < 2u; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
  [[unroll]] for (uint i = 0u; i < 2u; ++i)
    [[unroll]] for (uint j = 0u; j < 2u; ++j)
      coopMatStoreNV(acc[i][j], cs, (sm + 16u * i) * LC + sc + 16u * j, LC, false);
  barrier();
  for (uint e = t; e < BM * BN; e += 128u) {
    const uint m = m0 + e / BN, c = c0 + e % BN;
    if (m >= p.n || c >= p.rows) continue;
    const uint at = p.y_at + m * p.y_stride + c;
    const float v = cs[(e / BN) * LC + e % BN];
    Y.y[at] = p.accumulate != 0u ? Y.y[at] + v : v;
  }
}
