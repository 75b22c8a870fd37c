// ARM NEON row dots (row_dots.h), two families:
//   row_dots_neon: weights widened to F32 in registers (BF16 by a 16-bit shift, F16 by fcvtl,
//     Q8_0 by sxtl + scvtf) and multiplied into F32 accumulators, two 4-lane accumulators per
//     (weight row, x row); a Q8_0 block's scale multiplies the block's partial sum once.
//   row_dots_int8_neon: x quantized per 32-block (prepare_x.cpp) and integer dot products per
//     block, sdot (vdotq_s32) where the build has the dotprod extension (armv8.2-a+dotprod),
//     else widening multiplies (smull + smlal2) added pairwise into int32 lanes; each block's
//     four int32 lanes are converted to F32 and scaled by d_w * d_x. Weights stay signed: Q4_0
//     as q - 8, Q4_K's nibbles as they are (its minimums come off once per row through the sums
//     of the quantized x, int8_x.h), Q8_0's bytes as they are.
// Every (weight row, x row) pair has accumulators of its own and the same steps whatever the
// call's other rows, so results are batch invariant; the dotprod and plain builds give the same
// block sums (integer arithmetic is exact) but may group them into lanes differently.
#include "kernels/quant/row_dots.h"
#include "kernels/quant/type_kernels.h"

#ifdef __ARM_NEON
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/quant/block_formats.h"
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {

#ifdef __ARM_NEON
namespace {

inline float f16_scale(uint16_t bits) {
  __fp16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);  // one fcvt
}

// ---- weights widened to F32 ----

// 8 weights as two 4-lane vectors.
template <WeightType kType>
inline void load8(const uint8_t* p, float32x4_t& a, float32x4_t& b) {
  if constexpr (kType == WeightType::f32) {
    a = vld1q_f32(reinterpret_cast<const float*>(p));
    b = vld1q_f32(reinterpret_cast<const float*>(p) + 4);
  } else if constexpr (kType == WeightType::bf16) {
    const uint16x8_t v = vld1q_u16(reinterpret_cast<const uint16_t*>(p));
    a = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16));
    b = vreinterpretq_f32_u32(vshll_high_n_u16(v, 16));
  } else {
    const float16x8_t v = vreinterpretq_f16_u16(vld1q_u16(reinterpret_cast<const uint16_t*>(p)));
    a = vcvt_f32_f16(vget_low_f16(v));
    b = vcvt_high_f32_f16(v);
  }
}

template <WeightType kType>
inline float load1(const uint8_t* p) {
  if constexpr (kType == WeightType::f32) {
    float w;
    std::memcpy(&w, p, 4);
    return w;
  } else {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    if constexpr (kType == WeightType::bf16) {
      const uint32_t wide = static_cast<uint32_t>(bits) << 16;
      float w;
      std::memcpy(&w, &wide, 4);
      return w;
    } else {
      return f16_scale(bits);
    }
  }
}

// The float kernels keep 2 accumulators per pair, so they take at most two rows of x per pass
// (4 weight rows x 2 x rows x 2 = 16 of the 32 vector registers); more rows of x are further
// passes over the same (cached) weight rows, which leaves every pair's steps unchanged.
constexpr int kFloatXRows = 2;

template <class K>
void in_passes_of_two(const WeightMatrix& W, const PreparedX* x, int m, int64_t r0, int n, float* out) {
  for (int j = 0; j < m; j += kFloatXRows) {
    if (m - j >= 2)
      K::template run<2>(W, x + j, r0, n, out + j * kRowsPerDot);
    else
      K::template run<1>(W, x + j, r0, n, out + j * kRowsPerDot);
  }
}

// F32, BF16, F16: 8 weights a step, the last up to 7 one at a time after the lanes are summed.
template <WeightType kType>
struct FloatDots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    constexpr int64_t kBytes = float_weight_bytes(kType);
    const Rows rows = row_pointers(W, r0, n);
    float32x4_t acc[M][kRowsPerDot][2];
    for (auto& xr : acc)
      for (auto& pair : xr) pair[0] = pair[1] = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 8 <= W.cols; i += 8) {
      float32x4_t x0[M], x1[M];
      for (int j = 0; j < M; ++j) x0[j] = vld1q_f32(px[j].x + i), x1[j] = vld1q_f32(px[j].x + i + 4);
      for (int r = 0; r < kRowsPerDot; ++r) {
        if (kBytes * i % 64 == 0) rows.prefetch(r, kBytes * i);  // one cache line per 64 bytes of weights
        float32x4_t w0, w1;
        load8<kType>(rows.p[r] + kBytes * i, w0, w1);
        for (int j = 0; j < M; ++j) {
          acc[j][r][0] = vfmaq_f32(acc[j][r][0], w0, x0[j]);
          acc[j][r][1] = vfmaq_f32(acc[j][r][1], w1, x1[j]);
        }
      }
    }
    for (int j = 0; j < M; ++j)
      for (int r = 0; r < n; ++r) {
        float sum = vaddvq_f32(vaddq_f32(acc[j][r][0], acc[j][r][1]));
        // an explicit fma: whether the compiler would contract a * b + c could differ by M
        for (int64_t t = i; t < W.cols; ++t) sum = std::fma(load1<kType>(rows.p[r] + kBytes * t), px[j].x[t], sum);
        out[j * kRowsPerDot + r] = sum;
      }
  }
};

// Q8_0 widened to F32: per block, t = q . x over 32 weights in two lanes sets, then acc += t * d.
struct Q8_0FloatDots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    const Rows rows = row_pointers(W, r0, n);
    float32x4_t acc[M][kRowsPerDot][2];
    for (auto& xr : acc)
      for (auto& pair : xr) pair[0] = pair[1] = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < W.cols / kQ8_0Weights; ++b) {
      for (int r = 0; r < kRowsPerDot; ++r) {
        const BlockQ8_0& blk = rows.blocks<BlockQ8_0>(r)[b];
        rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ8_0)));
        float32x4_t q[8];
        for (int h = 0; h < 2; ++h) {
          const int8x16_t v = vld1q_s8(blk.qs + 16 * h);
          const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
          q[4 * h + 0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
          q[4 * h + 1] = vcvtq_f32_s32(vmovl_high_s16(lo));
          q[4 * h + 2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
          q[4 * h + 3] = vcvtq_f32_s32(vmovl_high_s16(hi));
        }
        const float d = f16_scale(blk.d);
        for (int j = 0; j < M; ++j) {
          const float* x = px[j].x + kQ8_0Weights * b;
          float32x4_t t0 = vmulq_f32(q[0], vld1q_f32(x)), t1 = vmulq_f32(q[1], vld1q_f32(x + 4));
          for (int k = 2; k < 8; k += 2) {
            t0 = vfmaq_f32(t0, q[k], vld1q_f32(x + 4 * k));
            t1 = vfmaq_f32(t1, q[k + 1], vld1q_f32(x + 4 * k + 4));
          }
          acc[j][r][0] = vfmaq_n_f32(acc[j][r][0], t0, d);
          acc[j][r][1] = vfmaq_n_f32(acc[j][r][1], t1, d);
        }
      }
    }
    for (int j = 0; j < M; ++j)
      for (int r = 0; r < n; ++r) out[j * kRowsPerDot + r] = vaddvq_f32(vaddq_f32(acc[j][r][0], acc[j][r][1]));
  }
};

// ---- int8 dot products ----

// acc + the dot products of a and b, 16 bytes into 4 int32 lanes. |a * b| <= 128 * 127 (x is
// never -128: prepare_x's q = round(x / d) with |x / d| <= 127), so the plain form's int16 sums
// of two products cannot overflow.
inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
#ifdef __ARM_FEATURE_DOTPROD
  return vdotq_s32(acc, a, b);
#else
  const int16x8_t p = vmlal_high_s8(vmull_s8(vget_low_s8(a), vget_low_s8(b)), a, b);
  return vpadalq_s16(acc, p);
#endif
}

// Block b of the prepared int8 x (row_dots.h): its 32 bytes as halves lo (x[0:16]) and hi
// (x[16:32]), and its scale. The layout is in pairs of blocks A = 2p, B = 2p + 1, 64 bytes a
// pair: A then B, or for Q4_0 A[0:16], B[0:16], A[16:32], B[16:32]; lane_scales holds 16 lanes
// per pair, the block's lanes starting at 8 * side (4 * side for Q4_0).
struct XBlock {
  int8x16_t lo, hi;
  float d;
};
inline XBlock x_block(const PreparedX& px, int64_t b, bool interleaved) {
  const int64_t p = b / 2, side = b % 2;
  const int8_t* q = px.q.data() + 64 * p + (interleaved ? 16 : 32) * side;
  const int64_t half = interleaved ? 32 : 16;
  return {vld1q_s8(q), vld1q_s8(q + half), px.lane_scales[16 * p + (interleaved ? 4 : 8) * side]};
}

template <int M>
using Acc = float32x4_t[M][kRowsPerDot];

template <int M>
void finish(const Acc<M>& acc, const float (*extra)[kRowsPerDot], int n, float* out) {
  for (int j = 0; j < M; ++j)
    for (int r = 0; r < n; ++r) out[j * kRowsPerDot + r] = vaddvq_f32(acc[j][r]) + (extra ? extra[j][r] : 0.0f);
}

struct Q4_0Dots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    const Rows rows = row_pointers(W, r0, n);
    const uint8x16_t low = vdupq_n_u8(0xF);
    const int8x16_t eight = vdupq_n_s8(8);
    Acc<M> acc;
    for (auto& xr : acc)
      for (auto& a : xr) a = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < W.cols / kQ4_0Weights; ++b) {
      XBlock x[M];
      for (int j = 0; j < M; ++j) x[j] = x_block(px[j], b, true);
      for (int r = 0; r < kRowsPerDot; ++r) {
        const BlockQ4_0& blk = rows.blocks<BlockQ4_0>(r)[b];
        rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ4_0)));
        const uint8x16_t v = vld1q_u8(blk.qs);
        const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, low)), eight);  // weights 0..15
        const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);  // weights 16..31
        const float d = f16_scale(blk.d);
        for (int j = 0; j < M; ++j) {
          const int32x4_t dot = dot16(dot16(vdupq_n_s32(0), lo, x[j].lo), hi, x[j].hi);
          acc[j][r] = vfmaq_n_f32(acc[j][r], vcvtq_f32_s32(dot), d * x[j].d);
        }
      }
    }
    finish<M>(acc, nullptr, n, out);
  }
};

struct Q8_0Dots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    const Rows rows = row_pointers(W, r0, n);
    Acc<M> acc;
    for (auto& xr : acc)
      for (auto& a : xr) a = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < W.cols / kQ8_0Weights; ++b) {
      XBlock x[M];
      for (int j = 0; j < M; ++j) x[j] = x_block(px[j], b, false);
      for (int r = 0; r < kRowsPerDot; ++r) {
        const BlockQ8_0& blk = rows.blocks<BlockQ8_0>(r)[b];
        rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ8_0)));
        const int8x16_t lo = vld1q_s8(blk.qs), hi = vld1q_s8(blk.qs + 16);
        const float d = f16_scale(blk.d);
        for (int j = 0; j < M; ++j) {
          const int32x4_t dot = dot16(dot16(vdupq_n_s32(0), lo, x[j].lo), hi, x[j].hi);
          acc[j][r] = vfmaq_n_f32(acc[j][r], vcvtq_f32_s32(dot), d * x[j].d);
        }
      }
    }
    finish<M>(acc, nullptr, n, out);
  }
};

// A super-block's 8 sub-blocks of 32 are x blocks 8b .. 8b + 7 (block_formats.h): group g's 32
// bytes hold sub-block 2g in their low nibbles and 2g + 1 in their high ones, each in x's order.
// The minimums, dmin * m_j times the sum of x' = d q over sub-block j (int8_x.h), are summed per
// super-block and come off at the end.
struct Q4_KDots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    const Rows rows = row_pointers(W, r0, n);
    const uint8x16_t low = vdupq_n_u8(0xF);
    Acc<M> acc;
    float minimums[M][kRowsPerDot] = {};
    for (auto& xr : acc)
      for (auto& a : xr) a = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < W.cols / kQ4_KWeights; ++b) {
      for (int r = 0; r < kRowsPerDot; ++r) {
        const BlockQ4_K& blk = rows.blocks<BlockQ4_K>(r)[b];
        const float d = f16_scale(blk.d), dmin = f16_scale(blk.dmin);
        float scale[kQ4_KSubBlocks], minimum[kQ4_KSubBlocks];
        for (int s = 0; s < kQ4_KSubBlocks; ++s) {
          const ScaleMin sm = q4_k_scale_min(blk.scales, s);
          scale[s] = d * sm.scale;
          minimum[s] = dmin * sm.min;
        }
        const float32x4_t min0 = vld1q_f32(minimum), min1 = vld1q_f32(minimum + 4);
        for (int j = 0; j < M; ++j) {
          const float* sums = px[j].sums.data() + kQ4_KSubBlocks * b;
          minimums[j][r] -= vaddvq_f32(vfmaq_f32(vmulq_f32(min0, vld1q_f32(sums)), min1, vld1q_f32(sums + 4)));
        }
        for (int g = 0; g < 4; ++g) {
          rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ4_K)) + 16 + 32 * g);
          const uint8x16_t v0 = vld1q_u8(blk.qs + 32 * g), v1 = vld1q_u8(blk.qs + 32 * g + 16);
          const int8x16_t lo0 = vreinterpretq_s8_u8(vandq_u8(v0, low)), lo1 = vreinterpretq_s8_u8(vandq_u8(v1, low));
          const int8x16_t hi0 = vreinterpretq_s8_u8(vshrq_n_u8(v0, 4)), hi1 = vreinterpretq_s8_u8(vshrq_n_u8(v1, 4));
          for (int j = 0; j < M; ++j) {
            const int64_t xb = kQ4_KSubBlocks * b + 2 * g;
            const XBlock xl = x_block(px[j], xb, false), xh = x_block(px[j], xb + 1, false);
            const int32x4_t dot_lo = dot16(dot16(vdupq_n_s32(0), lo0, xl.lo), lo1, xl.hi);
            const int32x4_t dot_hi = dot16(dot16(vdupq_n_s32(0), hi0, xh.lo), hi1, xh.hi);
            acc[j][r] = vfmaq_n_f32(acc[j][r], vcvtq_f32_s32(dot_lo), scale[2 * g] * xl.d);
            acc[j][r] = vfmaq_n_f32(acc[j][r], vcvtq_f32_s32(dot_hi), scale[2 * g + 1] * xh.d);
          }
        }
      }
    }
    finish<M>(acc, minimums, n, out);
  }
};

}  // namespace

void register_row_dots_neon(TypeKernelTable& table) {
  table[WeightType::f32].row_dots_widened = in_passes_of_two<FloatDots<WeightType::f32>>;
  table[WeightType::bf16].row_dots_widened = in_passes_of_two<FloatDots<WeightType::bf16>>;
  table[WeightType::f16].row_dots_widened = in_passes_of_two<FloatDots<WeightType::f16>>;
  table[WeightType::q8_0].row_dots_widened = in_passes_of_two<Q8_0FloatDots>;
}

void register_row_dots_int8_neon(TypeKernelTable& table) {
  table[WeightType::q4_0].row_dots_int8 = by_x_rows<Q4_0Dots>;
  table[WeightType::q8_0].row_dots_int8 = by_x_rows<Q8_0Dots>;
  table[WeightType::q4_k].row_dots_int8 = by_x_rows<Q4_KDots>;
}
#else
void register_row_dots_neon(TypeKernelTable&) {}
void register_row_dots_int8_neon(TypeKernelTable&) {}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA::quant
