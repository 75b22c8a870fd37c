// AVX-512 row dots: weights widened to F32 in registers (BF16 by a 16-bit shift, F16 by
// vcvtph2ps, 8- and 4-bit integers by vpmovsx/zx + vcvtdq2ps) and multiplied into F32
// accumulators, one per (weight row, x row); a block's scale multiplies the block's partial sum
// once. The kernels of the float types and Q8_0 (the ones matmul picks) take up to
// kXRowsPerDot rows of x per call, each weight widened once for all of them; Q4_0 and Q4_K,
// which matmul runs through the int8 kernels, one x row at a time.
#include "kernels/quant/row_dots.h"
#include "kernels/quant/type_kernels.h"

#ifdef __AVX512F__
#include <immintrin.h>

#include "kernels/quant/block_formats.h"
#include "kernels/quant/simd_avx512.h"
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {

#ifdef __AVX512F__
namespace {

template <WeightType kType>
inline __m512 load_weights(const uint8_t* p) {
  if constexpr (kType == WeightType::f32) return _mm512_loadu_ps(p);
  if constexpr (kType == WeightType::bf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
  if constexpr (kType == WeightType::f16) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
}
template <WeightType kType>
inline __m512 load_weights_masked(const uint8_t* p, __mmask16 m) {
  if constexpr (kType == WeightType::f32) return _mm512_maskz_loadu_ps(m, p);
  if constexpr (kType == WeightType::bf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
  if constexpr (kType == WeightType::f16) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

// F32, BF16, F16: 16 weights at a time, the last up to 15 through a mask.
template <WeightType kType>
struct FloatDots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    constexpr int64_t kBytes = float_weight_bytes(kType);
    const Rows rows = row_pointers(W, r0, n);
    Acc<M> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= W.cols; i += 16) {
      __m512 xv[M];
      for (int j = 0; j < M; ++j) xv[j] = _mm512_loadu_ps(px[j].x + i);
      for (int r = 0; r < kRowsPerDot; ++r) {
        if (kBytes * i % 64 == 0) rows.prefetch(r, kBytes * i);  // one cache line per 64 bytes of weights
        const __m512 w = load_weights<kType>(rows.p[r] + kBytes * i);
        for (int j = 0; j < M; ++j) acc[j][r] = _mm512_fmadd_ps(w, xv[j], acc[j][r]);
      }
    }
    if (i < W.cols) {
      const __mmask16 mask = static_cast<__mmask16>((1u << (W.cols - i)) - 1);
      __m512 xv[M];
      for (int j = 0; j < M; ++j) xv[j] = _mm512_maskz_loadu_ps(mask, px[j].x + i);
      for (int r = 0; r < kRowsPerDot; ++r) {
        const __m512 w = load_weights_masked<kType>(rows.p[r] + kBytes * i, mask);
        for (int j = 0; j < M; ++j) acc[j][r] = _mm512_fmadd_ps(w, xv[j], acc[j][r]);
      }
    }
    finish<M>(acc, nullptr, n, out);
  }
};

inline __m512 scale_of(uint16_t f16) { return _mm512_set1_ps(_cvtsh_ss(f16)); }

struct Q8_0Dots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    const Rows rows = row_pointers(W, r0, n);
    Acc<M> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm512_setzero_ps();
    for (int64_t b = 0; b < W.cols / kQ8_0Weights; ++b) {
      __m512 x0[M], x1[M];
      for (int j = 0; j < M; ++j) x0[j] = _mm512_loadu_ps(px[j].x + 32 * b), x1[j] = _mm512_loadu_ps(px[j].x + 32 * b + 16);
      for (int r = 0; r < kRowsPerDot; ++r) {
        const auto* blk = rows.blocks<BlockQ8_0>(r) + b;
        rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ8_0)));
        const __m512 q0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)blk->qs)));
        const __m512 q1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)(blk->qs + 16))));
        const __m512 d = scale_of(blk->d);
        for (int j = 0; j < M; ++j) {
          const __m512 t = _mm512_fmadd_ps(q1, x1[j], _mm512_mul_ps(q0, x0[j]));
          acc[j][r] = _mm512_fmadd_ps(t, d, acc[j][r]);
        }
      }
    }
    finish<M>(acc, nullptr, n, out);
  }
};

void dots_q4_0(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  const Rows rows = row_pointers(W, r0, n);
  const __m512i low = _mm512_set1_epi32(0xF), eight = _mm512_set1_epi32(8);
  Acc<1> acc = {{_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()}};
  for (int64_t b = 0; b < W.cols / kQ4_0Weights; ++b) {
    const __m512 x0 = _mm512_loadu_ps(x + 32 * b), x1 = _mm512_loadu_ps(x + 32 * b + 16);
    for (int r = 0; r < kRowsPerDot; ++r) {
      const auto* blk = rows.blocks<BlockQ4_0>(r) + b;
      rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ4_0)));
      const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)blk->qs));
      const __m512 q0 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(v, low), eight));  // weights 0..15
      const __m512 q1 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(v, 4), eight));   // weights 16..31
      const __m512 t = _mm512_fmadd_ps(q1, x1, _mm512_mul_ps(q0, x0));
      acc[0][r] = _mm512_fmadd_ps(t, scale_of(blk->d), acc[0][r]);
    }
  }
  finish<1>(acc, nullptr, n, out);
}

// sum over a 64-weight group: sub-block 2g from the low nibbles, 2g + 1 from the high ones
// (block_formats.h); the minimums come off once per row, through the sums of x.
void dots_q4_k(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  const Rows rows = row_pointers(W, r0, n);
  const __m512i low = _mm512_set1_epi32(0xF);
  Acc<1> acc = {{_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()}};
  float minimums[1][kRowsPerDot] = {};
  for (int64_t b = 0; b < W.cols / kQ4_KWeights; ++b) {
    for (int r = 0; r < kRowsPerDot; ++r) {
      const auto* blk = rows.blocks<BlockQ4_K>(r) + b;
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
        acc[0][r] = _mm512_fmadd_ps(t_lo, _mm512_set1_ps(d * lo.scale), acc[0][r]);
        acc[0][r] = _mm512_fmadd_ps(t_hi, _mm512_set1_ps(d * hi.scale), acc[0][r]);
        const float* xs = px.sums.data() + 8 * b + 2 * g;
        minimums[0][r] -= dmin * lo.min * xs[0] + dmin * hi.min * xs[1];
      }
    }
  }
  finish<1>(acc, minimums, n, out);
}

}  // namespace

void register_row_dots_avx512(TypeKernelTable& table) {
  table[WeightType::f32].row_dots_widened = by_x_rows<FloatDots<WeightType::f32>>;
  table[WeightType::bf16].row_dots_widened = by_x_rows<FloatDots<WeightType::bf16>>;
  table[WeightType::f16].row_dots_widened = by_x_rows<FloatDots<WeightType::f16>>;
  table[WeightType::q8_0].row_dots_widened = by_x_rows<Q8_0Dots>;
  table[WeightType::q4_0].row_dots_widened = each_x_row<dots_q4_0>;
  table[WeightType::q4_k].row_dots_widened = each_x_row<dots_q4_k>;
}
#else
void register_row_dots_avx512(TypeKernelTable&) {}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA::quant
