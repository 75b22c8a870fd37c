// AVX-512 row dots: weights widened to F32 in registers (BF16 by a 16-bit shift, F16 by
// vcvtph2ps, 8- and 4-bit integers by vpmovsx/zx + vcvtdq2ps) and multiplied into F32
// accumulators, one per row; a block's scale multiplies the block's partial sum once.
#include "kernels/quant/row_dots.h"

#ifdef __AVX512F__
#include <immintrin.h>

#include "kernels/quant/block_formats.h"
#endif

namespace difftx::quant {

#ifdef __AVX512F__
namespace {

struct Rows {
  const uint8_t* p[kRowsPerDot];  // unused slots repeat the last row (their sums are dropped)
  int64_t ahead;                  // bytes to the same place kPrefetchRows rows on (row_dots.h)
  void prefetch(int r, int64_t offset) const { _mm_prefetch(reinterpret_cast<const char*>(p[r]) + offset + ahead, _MM_HINT_T0); }
};

Rows row_pointers(const WeightMatrix& W, int64_t r0, int n) {
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);
  Rows rows;
  rows.ahead = kPrefetchRows * row_bytes;
  for (int i = 0; i < kRowsPerDot; ++i)
    rows.p[i] = static_cast<const uint8_t*>(W.data) + (r0 + (i < n ? i : n - 1)) * row_bytes;
  return rows;
}

void finish(const __m512* acc, const float* extra, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = _mm512_reduce_add_ps(acc[i]) + extra[i];
}

inline __m512 load_bf16(const uint8_t* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
}
inline __m512 load_f16(const uint8_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p)); }
inline __m512 load_bf16_masked(const uint8_t* p, __mmask16 m) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}
inline __m512 load_f16_masked(const uint8_t* p, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p)); }

template <bool kBf16>
void dots_half(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  const Rows rows = row_pointers(W, r0, n);
  __m512 acc[kRowsPerDot] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t i = 0;
  for (; i + 16 <= W.cols; i += 16) {
    const __m512 xv = _mm512_loadu_ps(x + i);
    for (int r = 0; r < kRowsPerDot; ++r) {
      if (i % 32 == 0) rows.prefetch(r, 2 * i);  // one cache line per 32 weights
      acc[r] = _mm512_fmadd_ps(kBf16 ? load_bf16(rows.p[r] + 2 * i) : load_f16(rows.p[r] + 2 * i), xv, acc[r]);
    }
  }
  if (i < W.cols) {
    const __mmask16 m = static_cast<__mmask16>((1u << (W.cols - i)) - 1);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
    for (int r = 0; r < kRowsPerDot; ++r)
      acc[r] = _mm512_fmadd_ps(kBf16 ? load_bf16_masked(rows.p[r] + 2 * i, m) : load_f16_masked(rows.p[r] + 2 * i, m),
                               xv, acc[r]);
  }
  const float zero[kRowsPerDot] = {};
  finish(acc, zero, n, out);
}

inline __m512 scale_of(uint16_t f16) { return _mm512_set1_ps(_cvtsh_ss(f16)); }

void dots_q8_0(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  const Rows rows = row_pointers(W, r0, n);
  __m512 acc[kRowsPerDot] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int64_t b = 0; b < W.cols / kQ8_0Weights; ++b) {
    const __m512 x0 = _mm512_loadu_ps(x + 32 * b), x1 = _mm512_loadu_ps(x + 32 * b + 16);
    for (int r = 0; r < kRowsPerDot; ++r) {
      const auto* blk = reinterpret_cast<const BlockQ8_0*>(rows.p[r]) + b;
      rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ8_0)));
      const __m512 q0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)blk->qs)));
      const __m512 q1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)(blk->qs + 16))));
      const __m512 t = _mm512_fmadd_ps(q1, x1, _mm512_mul_ps(q0, x0));
      acc[r] = _mm512_fmadd_ps(t, scale_of(blk->d), acc[r]);
    }
  }
  const float zero[kRowsPerDot] = {};
  finish(acc, zero, n, out);
}

void dots_q4_0(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  const Rows rows = row_pointers(W, r0, n);
  const __m512i low = _mm512_set1_epi32(0xF), eight = _mm512_set1_epi32(8);
  __m512 acc[kRowsPerDot] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int64_t b = 0; b < W.cols / kQ4_0Weights; ++b) {
    const __m512 x0 = _mm512_loadu_ps(x + 32 * b), x1 = _mm512_loadu_ps(x + 32 * b + 16);
    for (int r = 0; r < kRowsPerDot; ++r) {
      const auto* blk = reinterpret_cast<const BlockQ4_0*>(rows.p[r]) + b;
      rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ4_0)));
      const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)blk->qs));
      const __m512 q0 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(v, low), eight));  // weights 0..15
      const __m512 q1 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(v, 4), eight));   // weights 16..31
      const __m512 t = _mm512_fmadd_ps(q1, x1, _mm512_mul_ps(q0, x0));
      acc[r] = _mm512_fmadd_ps(t, scale_of(blk->d), acc[r]);
    }
  }
  const float zero[kRowsPerDot] = {};
  finish(acc, zero, n, out);
}

// sum over a 64-weight group: sub-block 2g from the low nibbles, 2g + 1 from the high ones
// (block_formats.h); the minimums come off once per row, through the sums of x.
void dots_q4_k(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  const Rows rows = row_pointers(W, r0, n);
  const __m512i low = _mm512_set1_epi32(0xF);
  __m512 acc[kRowsPerDot] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  float minimums[kRowsPerDot] = {};
  for (int64_t b = 0; b < W.cols / kQ4_KWeights; ++b) {
    for (int r = 0; r < kRowsPerDot; ++r) {
      const auto* blk = reinterpret_cast<const BlockQ4_K*>(rows.p[r]) + b;
      const float d = _cvtsh_ss(blk->d), dmin = _cvtsh_ss(blk->dmin);
      for (int g = 0; g < 4; ++g) {
        const float* xg = x + kQ4_KWeights * b + 64 * g;
        const ScaleMin lo = q4_k_scale_min(blk->scales, 2 * g), hi = q4_k_scale_min(blk->scales, 2 * g + 1);
        rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ4_K)) + 16 + 32 * g);
        const __m512i v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)(blk->qs + 32 * g)));
        const __m512i v1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)(blk->qs + 32 * g + 16)));
        __m512 t_lo = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v0, low)), _mm512_loadu_ps(xg));
        t_lo = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v1, low)), _mm512_loadu_ps(xg + 16), t_lo);
        __m512 t_hi = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v0, 4)), _mm512_loadu_ps(xg + 32));
        t_hi = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v1, 4)), _mm512_loadu_ps(xg + 48), t_hi);
        acc[r] = _mm512_fmadd_ps(t_lo, _mm512_set1_ps(d * lo.scale), acc[r]);
        acc[r] = _mm512_fmadd_ps(t_hi, _mm512_set1_ps(d * hi.scale), acc[r]);
        const float* xs = px.sums.data() + 8 * b + 2 * g;
        minimums[r] -= dmin * lo.min * xs[0] + dmin * hi.min * xs[1];
      }
    }
  }
  finish(acc, minimums, n, out);
}

}  // namespace

RowDots row_dots_avx512(WeightType type) {
  switch (type) {
    case WeightType::bf16: return dots_half<true>;
    case WeightType::f16: return dots_half<false>;
    case WeightType::q8_0: return dots_q8_0;
    case WeightType::q4_0: return dots_q4_0;
    case WeightType::q4_k: return dots_q4_k;
    case WeightType::f32: return nullptr;  // matmul uses the F32 gemv
  }
  return nullptr;
}
#else
RowDots row_dots_avx512(WeightType) { return nullptr; }
#endif

}  // namespace difftx::quant
