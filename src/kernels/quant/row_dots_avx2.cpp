// AVX2 row dots with weights widened to F32 (the float types and Q8_0; the twin of
// row_dots_avx512.cpp for CPUs without AVX-512): BF16 by a 16-bit shift, F16 by vcvtph2ps (F16C),
// Q8_0 by vpmovsxbd + vcvtdq2ps, 8 weights per ymm, multiplied into F32 accumulators, one per
// (weight row, x row). Q4_0 and Q4_K run through the int8 kernels (row_dots_int8_avx2.cpp).
//
// 16 ymm registers hold 8 accumulators besides the x and weight vectors, so a call takes its
// weight rows in passes: all 4 rows for 1 or 2 rows of x, 2 rows at a time for 3 or 4 (the
// second pass reads x again, from cache). Each accumulator's chain is the same in every pass
// shape, so an output's bits depend on its weight row and x row only.
#include "kernels/quant/row_dots.h"
#include "kernels/quant/type_kernels.h"

#include "kernels/isa.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && !defined(__AVX512F__)
#include <immintrin.h>

#include <cstring>

#include "kernels/quant/block_formats.h"
#include "kernels/quant/simd_avx2.h"
#define DIFFTX_ROW_DOTS_AVX2 1
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {

#ifdef DIFFTX_ROW_DOTS_AVX2
namespace {

template <WeightType kType>
inline __m256 load_weights(const uint8_t* p) {
  if constexpr (kType == WeightType::f32) return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  if constexpr (kType == WeightType::bf16)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16));
  if constexpr (kType == WeightType::f16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
}

// F32, BF16, F16: 8 weights at a time; the last up to 7 (and x's) copied into zeroed buffers.
template <WeightType kType>
struct FloatDots {
  static constexpr int64_t kBytes = float_weight_bytes(kType);

  template <int M, int R>
  static void pass(const WeightMatrix& W, const PreparedX* px, const Rows& rows, int first, float* out) {
    PassAcc<M, R> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= W.cols; i += 8) {
      __m256 xv[M];
      for (int j = 0; j < M; ++j) xv[j] = _mm256_loadu_ps(px[j].x + i);
      for (int r = 0; r < R; ++r) {
        if (kBytes * i % 64 == 0) rows.prefetch(first + r, kBytes * i);  // one cache line per 64 bytes
        const __m256 w = load_weights<kType>(rows.p[first + r] + kBytes * i);
        for (int j = 0; j < M; ++j) acc[j][r] = _mm256_fmadd_ps(w, xv[j], acc[j][r]);
      }
    }
    if (i < W.cols) {
      const int64_t left = W.cols - i;
      float xt[M][8] = {};
      for (int j = 0; j < M; ++j) std::memcpy(xt[j], px[j].x + i, left * sizeof(float));
      for (int r = 0; r < R; ++r) {
        alignas(32) uint8_t wt[32] = {};
        std::memcpy(wt, rows.p[first + r] + kBytes * i, left * kBytes);
        const __m256 w = load_weights<kType>(wt);
        for (int j = 0; j < M; ++j) acc[j][r] = _mm256_fmadd_ps(w, _mm256_loadu_ps(xt[j]), acc[j][r]);
      }
    }
    finish_pass<M, R>(acc, first, out);
  }
};

// Q8_0: per block, the 32 weights widened in four ymm, multiplied by x, then by the block's scale.
struct Q8_0Dots {
  template <int M, int R>
  static void pass(const WeightMatrix& W, const PreparedX* px, const Rows& rows, int first, float* out) {
    PassAcc<M, R> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm256_setzero_ps();
    for (int64_t b = 0; b < W.cols / kQ8_0Weights; ++b)
      for (int r = 0; r < R; ++r) {
        const BlockQ8_0* blk = rows.blocks<BlockQ8_0>(first + r) + b;
        rows.prefetch(first + r, b * static_cast<int64_t>(sizeof(BlockQ8_0)));
        __m256 q[4];
        for (int k = 0; k < 4; ++k)
          q[k] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)(blk->qs + 8 * k))));
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(blk->d));
        for (int j = 0; j < M; ++j) {
          const float* x = px[j].x + 32 * b;
          __m256 t = _mm256_mul_ps(q[0], _mm256_loadu_ps(x));
          for (int k = 1; k < 4; ++k) t = _mm256_fmadd_ps(q[k], _mm256_loadu_ps(x + 8 * k), t);
          acc[j][r] = _mm256_fmadd_ps(t, d, acc[j][r]);
        }
      }
    finish_pass<M, R>(acc, first, out);
  }
};

}  // namespace

void register_row_dots_avx2(TypeKernelTable& table) {
  table[WeightType::f32].row_dots_widened = by_x_rows<InPasses<FloatDots<WeightType::f32>>>;
  table[WeightType::bf16].row_dots_widened = by_x_rows<InPasses<FloatDots<WeightType::bf16>>>;
  table[WeightType::f16].row_dots_widened = by_x_rows<InPasses<FloatDots<WeightType::f16>>>;
  table[WeightType::q8_0].row_dots_widened = by_x_rows<InPasses<Q8_0Dots>>;
}
#else
void register_row_dots_avx2(TypeKernelTable&) {}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA::quant
