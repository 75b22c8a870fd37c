// The prefill GEMM on tensor cores (GL_NV_cooperative_matrix, 16 x 16 x 16 fragments, F16 inputs,
// F32 accumulation). A workgroup takes a tile of 64 rows of x by 128 weight rows, 32 columns at a
// time, staged in shared memory (gemm_staging.glsl: the next columns' loads in flight while these
// are multiplied): x as two F16 parts side by side (split_x), and the widened weights rounded to
// F16 (F16 exactly; BF16 exactly but below F16's normal range; the dequantized block types to
// 2^-11; below 2^-14 maybe flushed to 0, as the H200 does). hi is x rounded to nearest on F16's
// normal grid (0 below 2^-14), found with integer and power-of-two arithmetic, so no compiler can
// fold it away and it converts exactly; lo = (x - hi) 2^11, exact in F32, is rounded to F16 in
// F16's normal range wherever |x - hi| >= 2^-25. So x keeps about 22 bits whether or not the
// device flushes F16 subnormals (the H200 lost a plain x - f16(x) entirely): |x - hi - lo 2^-11|
// <= 2^-22 |x| + 2^-25 within F16's range (|x| < 65520), given conversions that round to nearest
// (VulkanTest.GemmKeepsXToTwentyTwoBits checks it bit for bit). Every product is taken twice: A_hi
// B into the accumulator, then A_lo B into the accumulator scaled by 2^11 and back (both scalings
// exact), so the sums are the ones an unscaled lo would give. Its eight subgroups of 32 each own
// 32 rows of x by 32 weight rows, 2 x 2 accumulators (few registers, so a thread's next tiles stay
// in flight across the products): each fragment of x loaded serves two products and each of the
// weights four (two with each part). A step of 32 columns takes x's hi parts first, then its lo
// parts into sums scaled once. An output's sum runs over the columns in the same order whatever
// the tile holds, so a row's bits depend on that row alone. Used where the device has the
// extension, for the types other than F32.
//
// Split-K (ops_matmul.cpp gemm_slices): the grid's rows of tiles come once per slice of
// slice_cols columns; slice s sums its columns into its own output, slice_floats further on,
// which matmul_slices.comp adds up in slice order. A narrow matrix so fills a GPU whose tiles would
// otherwise leave most of it idle; the slices are the matrix's own, so a row's bits still are too.
//
// EMULATED: the same tiles, staging and write-out with the fragments done in plain code (any
// device: lavapipe in the tests): a fragment of x or of the weights is where it lies in shared
// memory, an accumulator is 8 floats per invocation. So everything but the three fragment
// operations is tested where there are no tensor cores.
//
// Shared memory: 24 KiB (x 9 KiB, the weights 10 KiB, the accumulators' way out 5 KiB, four
// subgroups' at a time); emulated, 29.75 KiB (x's two parts in one word, the weights as F32), under
// the 32 KiB that may be all a device has.
#version 450
#if !EMULATED
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#include "common.glsl"

#define BM 64
#define BN 128
#define BK 32
#if EMULATED
#define LD (BK + 1)   // staged weights between rows (F32 here)
#define LDX (BK + 1)  // x's staged words between rows (both parts in one)
#else
#define LD (BK + 8)       // staged weights between rows (80 bytes in F16: fragment loads start 16-byte aligned)
#define LDX (2 * BK + 8)  // x's staged values between rows: BK hi, then BK lo, then 8 of padding (144 bytes)
#endif
#define LO 20        // floats between rows of an accumulator on its way out
#define WG 256u
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer WBuffer { uint w[]; } W;
layout(std430, set = 0, binding = 1) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer X4Buffer { vec4 x4[]; } X4;
layout(std430, set = 0, binding = 2) buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint w_byte, row_bytes, rows, cols;  // as matmul_gemv.comp
  uint x_at, y_at, y_stride, n;
  uint accumulate;
  uint slice_cols, slice_floats;  // one slice: every column, no offset
} p;

#include "weights.glsl"

// x's two parts (the header): hi, x on F16's normal grid, and lo = (x - hi) 2^11, both in F32.
vec2 split_x(float v) {
  const int e = int((floatBitsToUint(v) >> 23) & 0xffu) - 127;  // v's exponent
  if (e < -14) return vec2(0.0, v * 2048.0);
  // v / 2^(e - 10) lies in [2^10, 2^11): rounded to an integer, that is F16's 11 bits.
  const float down = uintBitsToFloat(uint(137 - e) << 23), up = uintBitsToFloat(uint(117 + e) << 23);
  const float hi = roundEven(v * down) * up;
  return vec2(hi, (v - hi) * 2048.0);
}

#if EMULATED
// Loops kept as loops: lavapipe compiles the fully unrolled emulation for half a minute a shader.
#define UNROLL [[dont_unroll]]
#define Staged float
float f16(float v) { return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x; }  // rounded to F16
shared uint xs[BM * LDX];  // [m][k]: packHalf2x16(hi, lo)
void store_x(uint at, float v) { xs[at] = packHalf2x16(split_x(v)); }
#else
#define UNROLL [[unroll]]
#define Staged float16_t
float16_t f16(float v) { return float16_t(v); }
shared float16_t xs[BM * LDX];  // [m][k] hi, [m][BK + k] lo
void store_x(uint at, float v) {
  const vec2 parts = split_x(v);
  xs[at] = f16(parts.x);
  xs[at + BK] = f16(parts.y);
}
#endif

shared Staged ws[BN * LD];  // [c][k]: the B operand (k by c) stored column-major
shared float outs[4u * 16u * LO];  // four subgroups' accumulators at a time on their way out
#define STORE_X(m, k, v) store_x((m) * LDX + (k), v)
#define STORE_W(c, k, v) ws[(c) * LD + (k)] = f16(v)
#include "gemm_staging.glsl"

// The fragments: A (16 rows of x by 16 columns, part 0 hi or 1 lo) from xs at element `at` of hi,
// B (16 columns by 16 weight rows) from ws, C += A B, and C into outs at `at`.
#if EMULATED
#define ATile uvec2  // (at, part)
#define BTile uint
struct CTile {
  float v[8];  // invocation l of its 32: row l / 2, columns 8 (l % 2) .. + 7
};
ATile load_a(uint at, uint part) { return uvec2(at, part); }
BTile load_b(uint at) { return at; }
CTile zero_c() { return CTile(float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)); }
CTile scaled(CTile c, float s) {
  [[unroll]] for (uint j = 0u; j < 8u; ++j) c.v[j] *= s;
  return c;
}
CTile mma(ATile a, BTile b, CTile c) {
  const uint lane = gl_LocalInvocationID.x % 32u, m = lane / 2u, c0 = 8u * (lane % 2u);
  UNROLL for (uint j = 0u; j < 8u; ++j) {
    float s = c.v[j];
    for (uint k = 0u; k < 16u; ++k)
      s = fma(unpackHalf2x16(xs[a.x + m * LDX + k])[a.y], ws[b + (c0 + j) * LD + k], s);
    c.v[j] = s;
  }
  return c;
}
void store_c(CTile c, uint at) {
  const uint lane = gl_LocalInvocationID.x % 32u, m = lane / 2u, c0 = 8u * (lane % 2u);
  [[unroll]] for (uint j = 0u; j < 8u; ++j) outs[at + m * LO + c0 + j] = c.v[j];
}
#else
#define ATile fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define BTile fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define CTile fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
ATile load_a(uint at, uint part) {
  ATile a;
  coopMatLoadNV(a, xs, at + part * BK, LDX, false);
  return a;
}
BTile load_b(uint at) {
  BTile b;
  coopMatLoadNV(b, ws, at, LD, true);
  return b;
}
CTile zero_c() { return CTile(0.0); }
CTile scaled(CTile c, float s) { return c * s; }
CTile mma(ATile a, BTile b, CTile c) { return coopMatMulAddNV(a, b, c); }
void store_c(CTile c, uint at) { coopMatStoreNV(c, outs, at, LO, false); }
#endif

void main() {
  // sg: subgroups as runs of 32 consecutive invocations, as NVIDIA makes them (context.cpp asks for
  // subgroups of 32; Vulkan does not promise the runs): the fragments and the write-out rely on it.
  const uint t = gl_LocalInvocationID.x, sg = t / 32u, lane = t % 32u;
  const uint tiles_m = (p.n + BM - 1u) / BM, slice = gl_WorkGroupID.y / tiles_m;
  const uint c0 = gl_WorkGroupID.x * BN, m0 = (gl_WorkGroupID.y % tiles_m) * BM;
  const uint k_begin = slice * p.slice_cols, k_end = min(p.cols, k_begin + p.slice_cols), y_at = p.y_at + slice * p.slice_floats;
  const uint sm = (sg / 4u) * 32u, sc = (sg % 4u) * 32u;  // this subgroup's 32 x 32 block
  CTile acc[2][2];
  UNROLL for (uint i = 0u; i < 2u; ++i)
    UNROLL for (uint j = 0u; j < 2u; ++j) acc[i][j] = zero_c();
  load_tiles(m0, c0, k_begin);
  for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
    store_tiles(c0, k0);
    barrier();
    if (k0 + BK < k_end) load_tiles(m0, c0, k0 + BK);  // in flight while this tile is used
    BTile b[2][2];  // [16 columns][weight rows]
    UNROLL for (uint h = 0u; h < 2u; ++h)
      UNROLL for (uint j = 0u; j < 2u; ++j) b[h][j] = load_b((sc + 16u * j) * LD + 16u * h);
    UNROLL for (uint part = 0u; part < 2u; ++part) {  // x's hi, then its lo (x's rest times 2^11)
      if (part == 1u)  // so the sums too while the lo products go in: both scalings exact
        UNROLL for (uint i = 0u; i < 2u; ++i)
          UNROLL for (uint j = 0u; j < 2u; ++j) acc[i][j] = scaled(acc[i][j], 2048.0);
      UNROLL for (uint h = 0u; h < 2u; ++h) {
        ATile a[2];
        UNROLL for (uint i = 0u; i < 2u; ++i) a[i] = load_a((sm + 16u * i) * LDX + 16u * h, part);
        UNROLL for (uint i = 0u; i < 2u; ++i)
          UNROLL for (uint j = 0u; j < 2u; ++j) acc[i][j] = mma(a[i], b[h][j], acc[i][j]);
      }
      if (part == 1u)
        UNROLL for (uint i = 0u; i < 2u; ++i)
          UNROLL for (uint j = 0u; j < 2u; ++j) acc[i][j] = scaled(acc[i][j], 1.0 / 2048.0);
    }
    barrier();
  }
  // Out one accumulator of each subgroup at a time, four subgroups at a time: through outs, then 8
  // outputs an invocation.
  const uint out_at = (sg % 4u) * 16u * LO, row = lane / 2u, col = 8u * (lane % 2u);
  UNROLL for (uint round = 0u; round < 2u; ++round)
    UNROLL for (uint i = 0u; i < 2u; ++i)
      UNROLL for (uint j = 0u; j < 2u; ++j) {
        const bool mine = sg / 4u == round;  // uniform in the subgroup
        if (mine) store_c(acc[i][j], out_at);
        barrier();
        const uint m = m0 + sm + 16u * i + row;
        UNROLL for (uint e = 0u; e < 8u; ++e) {
          const uint c = c0 + sc + 16u * j + col + e;
          if (mine && m < p.n && c < p.rows) {
            const uint at = y_at + m * p.y_stride + c;
            const float v = outs[out_at + row * LO + col + e];
            Y.y[at] = p.accumulate != 0u ? Y.y[at] + v : v;
          }
        }
        barrier();
      }
}
