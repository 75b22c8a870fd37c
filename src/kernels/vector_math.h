// Elementwise math written so GCC vectorises it inside `#pragma omp simd` loops. std::exp does
// not vectorise without -ffast-math (glibc declares its SIMD variants only under fast-math), so
// the fused ops that need exponentials (softmax, sigmoid) use exp_approx instead.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/isa.h"

#ifdef __AVX2__
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace difftx::DIFFTX_ISA {

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

#ifdef __AVX512F__
// 16 lanes of e^x: the reduction and polynomial of exp_approx, with k rounded by vrndscaleps and
// 2^k applied by vscalefps, which handles overflow (+inf), underflow (through the subnormals
// to 0) and NaN itself: about half the instructions of the auto-vectorised exp_approx.
// (maskz forms: GCC 12's unmasked intrinsics trip -Wmaybe-uninitialized.)
inline __m512 exp_avx512(__m512 x) {
  const __m512 k =
      _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860676533018738e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(0xFFFF, p, k);
}
#elif defined(__ARM_NEON)
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

#if defined(__AVX2__) && defined(__FMA__)
// 8 lanes of e^x, exp_approx step for step (AVX2 has no vscalefps): the clamp keeps k in
// [-125, 128] so that 2^(k-1) is a normal float built in the exponent field, and lanes below
// the clamp are zeroed. Compiled into the AVX-512 build too, so that its tests check it.
inline __m256 exp_avx2(__m256 x) {
  // max(low, x) and min(high, .) return their second operand for a NaN: NaN passes through.
  const __m256 xc = _mm256_min_ps(_mm256_set1_ps(88.8f), _mm256_max_ps(_mm256_set1_ps(-86.5f), x));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), xc);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860676533018738e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(126));
  const __m256 half_scale = _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, half_scale), _mm256_set1_ps(2.0f));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-86.5f), _CMP_LT_OQ), y);
}
#endif

}  // namespace difftx::DIFFTX_ISA
