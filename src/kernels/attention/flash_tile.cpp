#include "kernels/attention/flash_tile.h"

#include <algorithm>
#include <cmath>

#include "kernels/attention/flash_layout.h"
#include "kernels/isa.h"

#ifdef __AVX512F__
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() as the unused merge operand, which
// -Wmaybe-uninitialized (or, once inlined into unrolled loops, -Wuninitialized) reports at every
// call site (GCC PR 105593, a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>

#include "kernels/vector_math.h"
#endif

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)) || defined(__ARM_NEON)
#define DIFFTX_FLASH_SIMD 1
#endif

namespace difftx::DIFFTX_ISA::flash {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

// ---------------------------------------------------------------- portable scalar versions

void tile_gemm_scalar(int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
                      const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate,
                      const float* row_scale) {
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * c_rs;
    const float start = row_scale ? row_scale[r] : 1.0f;
    for (int64_t x = 0; x < n; ++x) cr[x] = accumulate ? cr[x] * start : 0.0f;
    for (int64_t kk = 0; kk < K; ++kk) {
      const float w = a[r * a_rs + kk * a_ks];
      const float* bk = b + kk * b_rs;
      for (int64_t x = 0; x < n; ++x) cr[x] += w * bk[x];
    }
  }
}

void softmax_online_step_scalar(int64_t rows, float* S, bool diag, float* m, float* l, float* alpha) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kTile;
    const int64_t valid = diag ? r + 1 : kTile;
    float mx = -INFINITY;
    for (int64_t c = 0; c < valid; ++c) mx = std::max(mx, s[c]);
    const float m_new = std::max(m[r], mx);
    const float base = m_new == -INFINITY ? 0.0f : m_new;
    float sum = 0;
    for (int64_t c = 0; c < kTile; ++c) sum += (s[c] = c < valid ? std::exp2(s[c] - base) : 0.0f);
    alpha[r] = std::exp2(m[r] - base);
    l[r] = l[r] * alpha[r] + sum;
    m[r] = m_new;
  }
}

void softmax_recompute_scalar(int64_t rows, float* S, bool diag, const float* lse) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kTile;
    const int64_t valid = diag ? r + 1 : kTile;
    const float base = lse[r] * kLog2e;
    for (int64_t c = 0; c < kTile; ++c) s[c] = c < valid ? std::exp2(s[c] - base) : 0.0f;
  }
}

void softmax_grad_scalar(int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t valid = diag ? r + 1 : kTile;
    for (int64_t c = 0; c < kTile; ++c)
      dP[r * kTile + c] = c < valid ? P[r * kTile + c] * (dP[r * kTile + c] - D[r]) * scale : 0.0f;
  }
}

#ifdef __AVX512F__
// ---------------------------------------------------------------- AVX-512 versions

// A register block of C: R rows x NV vectors of 16 floats, accumulated over K in registers.
// Per kk: NV loads of B, R broadcasts of A, R*NV FMAs.
template <int R, int NV>
inline void gemm_block(int64_t K, const float* a, int64_t a_rs, int64_t a_ks, const float* b, int64_t b_rs,
                       float* c, int64_t c_rs, bool accumulate, const float* row_scale) {
  __m512 acc[R][NV];
  for (int r = 0; r < R; ++r) {
    const __m512 s = _mm512_set1_ps(row_scale ? row_scale[r] : 1.0f);
    for (int v = 0; v < NV; ++v)
      acc[r][v] = accumulate ? _mm512_mul_ps(_mm512_loadu_ps(c + r * c_rs + 16 * v), s) : _mm512_setzero_ps();
  }
  for (int64_t kk = 0; kk < K; ++kk) {
    const float* bk = b + kk * b_rs;
    const float* ak = a + kk * a_ks;
    __m512 bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(bk + 16 * v);
    for (int r = 0; r < R; ++r) {
      const __m512 ar = _mm512_set1_ps(ak[r * a_rs]);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + r * c_rs + 16 * v, acc[r][v]);
}

// All rows of one column chunk of NV vectors: blocks of kRows rows, then the remainder.
template <int NV>
void gemm_columns(int64_t rows, int64_t K, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                  int64_t b_rs, float* c, int64_t c_rs, bool accumulate, const float* row_scale) {
  constexpr int kRows = NV >= 4 ? 6 : 12;  // 24 (or 12) accumulators in 32 zmm registers
  int64_t r = 0;
  auto block = [&]<int R>() {
    gemm_block<R, NV>(K, a + r * a_rs, a_rs, a_ks, b, b_rs, c + r * c_rs, c_rs, accumulate,
                      row_scale ? row_scale + r : nullptr);
  };
  for (; r + kRows <= rows; r += kRows) block.template operator()<kRows>();
  switch (rows - r) {
    case 0: break;
    case 1: block.template operator()<1>(); break;
    case 2: block.template operator()<2>(); break;
    case 3: block.template operator()<3>(); break;
    case 4: block.template operator()<4>(); break;
    case 5: block.template operator()<5>(); break;
    case 6: block.template operator()<6>(); break;
    case 7: block.template operator()<7>(); break;
    case 8: block.template operator()<8>(); break;
    case 9: block.template operator()<9>(); break;
    case 10: block.template operator()<10>(); break;
    default: block.template operator()<11>(); break;
  }
}

void tile_gemm_simd(int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
                    const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate,
                    const float* row_scale) {
  int64_t col = 0;
  for (; col + 64 <= n; col += 64)
    gemm_columns<4>(rows, K, a, a_rs, a_ks, b + col, b_rs, c + col, c_rs, accumulate, row_scale);
  for (; col + 32 <= n; col += 32)
    gemm_columns<2>(rows, K, a, a_rs, a_ks, b + col, b_rs, c + col, c_rs, accumulate, row_scale);
  for (; col < n; col += 16)
    gemm_columns<1>(rows, K, a, a_rs, a_ks, b + col, b_rs, c + col, c_rs, accumulate, row_scale);
}

// 2^x for x <= 0: 2^x = 2^n * 2^f with n = round(x), f in [-1/2, 1/2], 2^f by its degree-6
// Taylor polynomial in f*ln2 (relative error ~1e-7, float precision). Inputs below -126 give
// 2^-126 (callers zero masked lanes explicitly); NaN propagates.
inline __m512 exp2_ps(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-126.0f), x);
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, n);
  __m512 p = _mm512_set1_ps(1.5403530393381606e-4f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.3333558146428443e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291076284772e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504108664821580e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022650695910071e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718055994531e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// Lanes of vector v (keys 16v .. 16v+15) that are causally visible from row r of a diagonal tile.
inline __mmask16 visible(int64_t r, int v) {
  const int64_t count = std::clamp<int64_t>(r + 1 - 16 * v, 0, 16);
  return static_cast<__mmask16>((1u << count) - 1u);
}

constexpr int kVecs = kTile / 16;
static_assert(kVecs == 4, "the row reductions below are written for 64-key tiles");

// R rows of softmax_online_step at once: each row's horizontal max and sum is a long dependency
// chain, and R independent rows let the core overlap them.
template <int R>
inline void softmax_online_rows(int64_t r0, float* S, bool diag, float* m, float* l, float* alpha) {
  const __m512 neg_inf = _mm512_set1_ps(-INFINITY);
  __m512 x[R][kVecs];
  __mmask16 keep[R][kVecs];
  float base[R];
  alignas(64) float shift[16] = {};  // m_old - base of each row, for one vector 2^x
  for (int i = 0; i < R; ++i) {
    const int64_t r = r0 + i;
    for (int v = 0; v < kVecs; ++v) {
      keep[i][v] = diag ? visible(r, v) : static_cast<__mmask16>(0xFFFF);
      x[i][v] = _mm512_mask_mov_ps(neg_inf, keep[i][v], _mm512_loadu_ps(S + r * kTile + 16 * v));
    }
  }
  for (int i = 0; i < R; ++i) {
    const int64_t r = r0 + i;
    const float mx = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(x[i][0], x[i][1]), _mm512_max_ps(x[i][2], x[i][3])));
    const float m_new = std::max(m[r], mx);
    base[i] = m_new == -INFINITY ? 0.0f : m_new;
    shift[i] = m[r] - base[i];  // -inf on a row's first tile: alpha ~ 2^-126, times l = O = 0
    m[r] = m_new;
  }
  alignas(64) float scale[16];
  _mm512_store_ps(scale, exp2_ps(_mm512_load_ps(shift)));
  for (int i = 0; i < R; ++i) alpha[r0 + i] = scale[i];
  for (int i = 0; i < R; ++i) {
    const int64_t r = r0 + i;
    const __m512 vbase = _mm512_set1_ps(base[i]);
    __m512 sum = _mm512_setzero_ps();
    for (int v = 0; v < kVecs; ++v) {
      const __m512 p = _mm512_maskz_mov_ps(keep[i][v], exp2_ps(_mm512_sub_ps(x[i][v], vbase)));
      _mm512_storeu_ps(S + r * kTile + 16 * v, p);
      sum = _mm512_add_ps(sum, p);
    }
    l[r] = l[r] * alpha[r] + _mm512_reduce_add_ps(sum);
  }
}

void softmax_recompute_simd(int64_t rows, float* S, bool diag, const float* lse) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kTile;
    const __m512 base = _mm512_set1_ps(lse[r] * kLog2e);
    for (int v = 0; v < kVecs; ++v) {
      const __mmask16 keep = diag ? visible(r, v) : static_cast<__mmask16>(0xFFFF);
      const __m512 p = exp2_ps(_mm512_sub_ps(_mm512_loadu_ps(s + 16 * v), base));
      _mm512_storeu_ps(s + 16 * v, _mm512_maskz_mov_ps(keep, p));
    }
  }
}

void softmax_grad_simd(int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale) {
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int64_t r = 0; r < rows; ++r) {
    const __m512 d = _mm512_set1_ps(D[r]);
    for (int v = 0; v < kVecs; ++v) {
      const __mmask16 keep = diag ? visible(r, v) : static_cast<__mmask16>(0xFFFF);
      float* g = dP + r * kTile + 16 * v;
      const __m512 p = _mm512_loadu_ps(P + r * kTile + 16 * v);
      const __m512 ds = _mm512_mul_ps(_mm512_mul_ps(p, _mm512_sub_ps(_mm512_loadu_ps(g), d)), vscale);
      _mm512_storeu_ps(g, _mm512_maskz_mov_ps(keep, ds));
    }
  }
}
#elif defined(__AVX2__) && defined(__FMA__)
// ---------------------------------------------------------------- AVX2 primitives (8 lanes)

using Vec = __m256;
using Mask = __m256;  // all-ones lanes
constexpr int kLanes = 8;

inline Vec vload(const float* p) { return _mm256_loadu_ps(p); }
inline void vstore(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline Vec vset(float x) { return _mm256_set1_ps(x); }
inline Vec vadd(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline Vec vsub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
inline Vec vmul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }  // a * b + c
inline Vec vmax(Vec a, Vec b) { return _mm256_max_ps(a, b); }
inline Vec vkeep(Mask m, Vec x) { return _mm256_and_ps(m, x); }  // 0 outside m
inline Vec vselect(Mask m, Vec x, Vec other) { return _mm256_blendv_ps(other, x, m); }

inline float hmax(Vec x) {
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

inline float hsum(Vec x) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// 2^x for x <= 0, as the AVX-512 exp2_ps: n = round(x) in [-126, 0], so 2^n is a normal float
// built in the exponent field.
inline Vec exp2_ps(Vec x) {
  x = _mm256_max_ps(_mm256_set1_ps(-126.0f), x);  // NaN propagates (max returns its 2nd operand)
  const __m256 n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 f = _mm256_sub_ps(x, n);
  __m256 p = _mm256_set1_ps(1.5403530393381606e-4f);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.3333558146428443e-3f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.6181291076284772e-3f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.5504108664821580e-2f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.4022650695910071e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.9314718055994531e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
  const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23)));
}

// All-ones lanes of vector v (keys 8v .. 8v+7) that are causally visible from row r of a
// diagonal tile (every lane when !diag).
inline Mask visible(int64_t r, int v, bool diag) {
  if (!diag) return _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int count = static_cast<int>(std::clamp<int64_t>(r + 1 - 8 * v, 0, 8));
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(count), lane));
}
#elif defined(__ARM_NEON)
// ---------------------------------------------------------------- NEON primitives (4 lanes)

using Vec = float32x4_t;
using Mask = uint32x4_t;
constexpr int kLanes = 4;

inline Vec vload(const float* p) { return vld1q_f32(p); }
inline void vstore(float* p, Vec v) { vst1q_f32(p, v); }
inline Vec vset(float x) { return vdupq_n_f32(x); }
inline Vec vadd(Vec a, Vec b) { return vaddq_f32(a, b); }
inline Vec vsub(Vec a, Vec b) { return vsubq_f32(a, b); }
inline Vec vmul(Vec a, Vec b) { return vmulq_f32(a, b); }
inline Vec vfma(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }  // a * b + c
inline Vec vmax(Vec a, Vec b) { return vmaxq_f32(a, b); }
inline Vec vkeep(Mask m, Vec x) { return vreinterpretq_f32_u32(vandq_u32(m, vreinterpretq_u32_f32(x))); }
inline Vec vselect(Mask m, Vec x, Vec other) { return vbslq_f32(m, x, other); }
inline float hmax(Vec x) { return vmaxvq_f32(x); }
inline float hsum(Vec x) { return vaddvq_f32(x); }

// 2^x as e^(x ln2) by vector_math.h's exp_neon: the product x ln2 rounds, so a result may be
// off by up to |x| * 6e-8 relatively more than the x86 exp2_ps (2e-6 at x = -30, where 2^x is
// below 1e-9); below x = -124.8 it is 0 rather than 2^-126. NaN propagates.
inline Vec exp2_ps(Vec x) { return exp_neon(vmulq_n_f32(x, 0.6931471805599453f)); }

// All-ones lanes of vector v (keys 4v .. 4v+3) that are causally visible from row r of a
// diagonal tile (every lane when !diag).
inline Mask visible(int64_t r, int v, bool diag) {
  if (!diag) return vdupq_n_u32(~0u);
  const int32x4_t key = vaddq_s32(int32x4_t{0, 1, 2, 3}, vdupq_n_s32(4 * v));
  return vcleq_s32(key, vdupq_n_s32(static_cast<int32_t>(r)));
}
#endif  // __AVX512F__ / __AVX2__ / __ARM_NEON

#if defined(DIFFTX_FLASH_SIMD) && !defined(__AVX512F__)
// ---------------------------------------------------------------- AVX2 and NEON versions, on those primitives

// A register block of C: R rows x NV vectors, accumulated over K in registers.
// Per kk: NV loads of B, R broadcasts of A, R*NV FMAs.
template <int R, int NV>
inline void gemm_block(int64_t K, const float* a, int64_t a_rs, int64_t a_ks, const float* b, int64_t b_rs,
                       float* c, int64_t c_rs, bool accumulate, const float* row_scale) {
  Vec acc[R][NV];
  for (int r = 0; r < R; ++r) {
    const Vec s = vset(row_scale ? row_scale[r] : 1.0f);
    for (int v = 0; v < NV; ++v) acc[r][v] = accumulate ? vmul(vload(c + r * c_rs + kLanes * v), s) : vset(0.0f);
  }
  for (int64_t kk = 0; kk < K; ++kk) {
    const float* bk = b + kk * b_rs;
    const float* ak = a + kk * a_ks;
    Vec bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = vload(bk + kLanes * v);
    for (int r = 0; r < R; ++r) {
      const Vec ar = vset(ak[r * a_rs]);
      for (int v = 0; v < NV; ++v) acc[r][v] = vfma(ar, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) vstore(c + r * c_rs + kLanes * v, acc[r][v]);
}

// 16 columns at a time in blocks of 6 rows: AVX2 12 accumulators, 2 vectors of B and a
// broadcast in its 16 ymm registers; NEON 24 accumulators and 4 vectors of B in its 32.
void tile_gemm_simd(int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
                    const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate,
                    const float* row_scale) {
  constexpr int kRows = 6;
  for (int64_t col = 0; col < n; col += 16) {
    int64_t r = 0;
    auto block = [&]<int R>() {
      gemm_block<R, 16 / kLanes>(K, a + r * a_rs, a_rs, a_ks, b + col, b_rs, c + r * c_rs + col, c_rs, accumulate,
                                 row_scale ? row_scale + r : nullptr);
    };
    for (; r + kRows <= rows; r += kRows) block.template operator()<kRows>();
    switch (rows - r) {
      case 0: break;
      case 1: block.template operator()<1>(); break;
      case 2: block.template operator()<2>(); break;
      case 3: block.template operator()<3>(); break;
      case 4: block.template operator()<4>(); break;
      default: block.template operator()<5>(); break;
    }
  }
}

constexpr int kVecs = kTile / kLanes;

// R rows of softmax_online_step at once, as the AVX-512 version; the tile rows are read from
// L1 twice (max, then exponentials) rather than held in registers.
template <int R>
inline void softmax_online_rows(int64_t r0, float* S, bool diag, float* m, float* l, float* alpha) {
  static_assert(R <= kLanes, "one vector 2^x for the rows' alphas");
  const Vec neg_inf = vset(-INFINITY);
  float base[R];
  alignas(32) float shift[kLanes] = {};  // m_old - base of each row, for one vector 2^x
  for (int i = 0; i < R; ++i) {
    const int64_t r = r0 + i;
    Vec mx = neg_inf;
    for (int v = 0; v < kVecs; ++v)
      mx = vmax(mx, vselect(visible(r, v, diag), vload(S + r * kTile + kLanes * v), neg_inf));
    const float m_new = std::max(m[r], hmax(mx));
    base[i] = m_new == -INFINITY ? 0.0f : m_new;
    shift[i] = m[r] - base[i];  // -inf on a row's first tile: alpha ~ 2^-126 (NEON 0), times l = O = 0
    m[r] = m_new;
  }
  alignas(32) float scale[kLanes];
  vstore(scale, exp2_ps(vload(shift)));
  for (int i = 0; i < R; ++i) alpha[r0 + i] = scale[i];
  for (int i = 0; i < R; ++i) {
    const int64_t r = r0 + i;
    const Vec vbase = vset(base[i]);
    Vec sum0 = vset(0.0f), sum1 = vset(0.0f);
    for (int v = 0; v < kVecs; v += 2) {
      float* s = S + r * kTile + kLanes * v;
      const Vec p0 = vkeep(visible(r, v, diag), exp2_ps(vsub(vload(s), vbase)));
      const Vec p1 = vkeep(visible(r, v + 1, diag), exp2_ps(vsub(vload(s + kLanes), vbase)));
      vstore(s, p0);
      vstore(s + kLanes, p1);
      sum0 = vadd(sum0, p0);
      sum1 = vadd(sum1, p1);
    }
    l[r] = l[r] * alpha[r] + hsum(vadd(sum0, sum1));
  }
}

void softmax_recompute_simd(int64_t rows, float* S, bool diag, const float* lse) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kTile;
    const Vec base = vset(lse[r] * kLog2e);
    for (int v = 0; v < kVecs; ++v) {
      const Vec p = exp2_ps(vsub(vload(s + kLanes * v), base));
      vstore(s + kLanes * v, vkeep(visible(r, v, diag), p));
    }
  }
}

void softmax_grad_simd(int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale) {
  const Vec vscale = vset(scale);
  for (int64_t r = 0; r < rows; ++r) {
    const Vec d = vset(D[r]);
    for (int v = 0; v < kVecs; ++v) {
      float* g = dP + r * kTile + kLanes * v;
      const Vec p = vload(P + r * kTile + kLanes * v);
      const Vec ds = vmul(vmul(p, vsub(vload(g), d)), vscale);
      vstore(g, vkeep(visible(r, v, diag), ds));
    }
  }
}
#endif  // AVX2 and NEON

#ifdef DIFFTX_FLASH_SIMD
void softmax_online_step_simd(int64_t rows, float* S, bool diag, float* m, float* l, float* alpha) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) softmax_online_rows<4>(r, S, diag, m, l, alpha);
  for (; r < rows; ++r) softmax_online_rows<1>(r, S, diag, m, l, alpha);
}
#endif

}  // namespace

bool simd_compiled() {
#ifdef DIFFTX_FLASH_SIMD
  return true;
#else
  return false;
#endif
}

#ifdef DIFFTX_FLASH_SIMD
#define DIFFTX_FLASH_DISPATCH(name, ...) \
  return path == Path::simd ? name##_simd(__VA_ARGS__) : name##_scalar(__VA_ARGS__)
#else
#define DIFFTX_FLASH_DISPATCH(name, ...) return name##_scalar(__VA_ARGS__)
#endif

void tile_gemm(Path path, int64_t rows, int64_t n, int64_t K, const float* a, int64_t a_rs, int64_t a_ks,
               const float* b, int64_t b_rs, float* c, int64_t c_rs, bool accumulate, const float* row_scale) {
  DIFFTX_FLASH_DISPATCH(tile_gemm, rows, n, K, a, a_rs, a_ks, b, b_rs, c, c_rs, accumulate, row_scale);
}

void softmax_online_step(Path path, int64_t rows, float* S, bool diag, float* m, float* l, float* alpha) {
  DIFFTX_FLASH_DISPATCH(softmax_online_step, rows, S, diag, m, l, alpha);
}

void softmax_recompute(Path path, int64_t rows, float* S, bool diag, const float* lse) {
  DIFFTX_FLASH_DISPATCH(softmax_recompute, rows, S, diag, lse);
}

void softmax_grad(Path path, int64_t rows, const float* P, float* dP, bool diag, const float* D, float scale) {
  DIFFTX_FLASH_DISPATCH(softmax_grad, rows, P, dP, diag, D, scale);
}

#undef DIFFTX_FLASH_DISPATCH

}  // namespace difftx::DIFFTX_ISA::flash
