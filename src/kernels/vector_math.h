// Elementwise math written so GCC vectorises it inside `#pragma omp simd` loops. std::exp does
// not vectorise without -ffast-math (glibc declares its SIMD variants only under fast-math), so
// the fused ops that need exponentials (softmax, sigmoid) use exp_approx instead.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/simd.h"

#ifdef __ARM_NEON
#include <arm_neon.h>
#endif

namespace difftx::kernels::DIFFTX_ISA {

// e^x for float x with a relative error below 1.5e-7 (measured 7.7e-8) wherever the result is a
// normal float. e^x = 2^k * e^r with k = round(x / ln2) and |r| <= ln2 / 2 (Cody-Waite reduction:
// ln2 split in a high part with few mantissa bits, so k * ln2_hi is exact, and a low correction);
// e^r by its Taylor series to degree 7 (truncation error < 0.35^8 / 8! < 2e-8). Results below
// ~2.7e-38 (x < -86.5) flush to 0; x beyond ~88.72 gives +inf; NaN stays NaN.
inline float exp_approx(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860676533018738e-06f;
  constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kLow = -86.5f, kHigh = 88.8f;
  // Clamp with comparisons (not fmin/fmax, which do not vectorise); NaN passes through.
  const float xc = x < kLow ? kLow : (x > kHigh ? kHigh : x);
  const float shifted = std::fma(xc, kLog2e, kRoundMagic);
  const int32_t k = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRoundMagic);
  const float kf = shifted - kRoundMagic;
  float r = std::fma(-kf, kLn2Hi, xc);
  r = std::fma(-kf, kLn2Lo, r);
  float p = 1.0f / 5040;
  p = std::fma(p, r, 1.0f / 720);
  p = std::fma(p, r, 1.0f / 120);
  p = std::fma(p, r, 1.0f / 24);
  p = std::fma(p, r, 1.0f / 6);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  // 2^k as 2^(k-1) * 2, so that k = 128 (x just below the overflow bound) still has a valid
  // exponent field; k >= -125 here, so 2^(k-1) is a normal float.
  const float half_scale = std::bit_cast<float>((k + 126) << 23);
  const float y = p * half_scale * 2.0f;
  // y, or +0 for x < kLow, selected by an integer mask: GCC 12 does not if-convert a float
  // select on a comparison (which may trap) without AVX-512's masks, and at -march=x86-64-v3
  // the whole loop would stay scalar. A NaN x compares false and keeps y (NaN).
  return std::bit_cast<float>(std::bit_cast<int32_t>(y) & -static_cast<int32_t>(!(x < kLow)));
}

// The logistic function 1 / (1 + e^-x), saturating cleanly to 0 and 1.
inline float sigmoid_approx(float x) { return 1.0f / (1.0f + exp_approx(-x)); }

#ifdef __ARM_NEON
// 4 lanes of e^x by exp_approx's own steps (the same bits lane for lane): GCC vectorises the
// scalar form only 2 lanes wide for AArch64.
inline float32x4_t exp_neon(float32x4_t x) {
  const float32x4_t low = vdupq_n_f32(-86.5f), magic = vdupq_n_f32(12582912.0f);
  const uint32x4_t below = vcltq_f32(x, low);
  const float32x4_t xc = vbslq_f32(below, low, vbslq_f32(vcgtq_f32(x, vdupq_n_f32(88.8f)), vdupq_n_f32(88.8f), x));
  const float32x4_t shifted = vfmaq_f32(magic, xc, vdupq_n_f32(1.44269504088896341f));
  const int32x4_t k = vsubq_s32(vreinterpretq_s32_f32(shifted), vreinterpretq_s32_f32(magic));
  const float32x4_t kf = vsubq_f32(shifted, magic);
  float32x4_t r = vfmsq_f32(xc, kf, vdupq_n_f32(0.693145751953125f));
  r = vfmsq_f32(r, kf, vdupq_n_f32(1.42860676533018738e-06f));
  float32x4_t p = vdupq_n_f32(1.0f / 5040);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 720), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 120), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 24), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 6), p, r);
  p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  const float32x4_t half_scale = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(126)), 23));
  const float32x4_t y = vmulq_n_f32(vmulq_f32(p, half_scale), 2.0f);
  return vbslq_f32(below, vdupq_n_f32(0.0f), y);
}
#endif

#if DIFFTX_SIMD_FMA
// A vector of e^x, exp_approx's reduction and polynomial lane for lane, with k rounded to nearest
// by vrndscaleps / vroundps / frintn. AVX3 applies 2^k with vscalefps, which handles overflow
// (+inf) and underflow (through the subnormals to 0) itself: about half the instructions; its x
// is clamped to [-104, 89], beyond which e^x rounds to 0 or +inf anyway, so that -inf and +inf
// do not meet inf - inf in the reduction. Elsewhere x is clamped to [-86.5, 88.8] so that k stays
// in [-125, 128] and 2^k is 2^(k-1) * 2 with 2^(k-1) a normal float built in the exponent field,
// and lanes below the clamp are zeroed. The two differ only where e^x < 2.7e-38 (AVX3 keeps the
// subnormals). The cross-entropy kernel sums these.
inline FloatVec exp_vec(FloatVec x) {
  const FloatTag d;
  // On x86, Max(low, x) and Min(high, .) return their second operand for a NaN: NaN passes
  // through. NEON's are IEEE maxNum / minNum, which drop it: its lanes are put back at the end.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const FloatVec xc = hn::Min(hn::Set(d, 89.0f), hn::Max(hn::Set(d, -104.0f), x));
#else
  const FloatVec xc = hn::Min(hn::Set(d, 88.8f), hn::Max(hn::Set(d, -86.5f), x));
#endif
  const FloatVec k = hn::Round(hn::Mul(xc, hn::Set(d, 1.44269504088896341f)));
  FloatVec r = hn::NegMulAdd(k, hn::Set(d, 0.693145751953125f), xc);
  r = hn::NegMulAdd(k, hn::Set(d, 1.42860676533018738e-06f), r);
  FloatVec p = hn::Set(d, 1.0f / 5040);
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 720));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 120));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 24));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 6));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // (maskz: GCC 12's unmasked intrinsic trips -Wmaybe-uninitialized)
  return FloatVec{_mm512_maskz_scalef_ps(0xFFFF, p.raw, k.raw)};
#else
  const hn::RebindToSigned<FloatTag> di;
  // k + 1.5 * 2^23 holds the integer k in its low mantissa bits.
  const auto k_bits = hn::Sub(hn::BitCast(di, hn::Add(k, hn::Set(d, 12582912.0f))), hn::Set(di, 0x4B400000 - 126));
  const FloatVec half_scale = hn::BitCast(d, hn::ShiftLeft<23>(k_bits));
  const FloatVec y = hn::Mul(hn::Mul(p, half_scale), hn::Set(d, 2.0f));
  return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -86.5f)), y));
#endif
}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA
