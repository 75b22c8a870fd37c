// AVX2 row dots with int8 dot products, for CPUs without AVX-512 VNNI (row_dots_vnni.cpp is the
// twin): x quantized per 32-block (prepare_x.cpp), weights as unsigned bytes; simd_avx2.h's dot4
// multiplies unsigned weight bytes by signed x bytes into int32 lanes (4 bytes each: vpmaddubsw
// and vpmaddwd, or vpdpbusd at the avxvnni level, the same sums); the lanes are converted to F32
// and scaled by d_w * d_x of their block. Each weight is unpacked once for the pass's rows of x.
//   Q4_0: nibbles q in [0, 15], x in the pair layout A[0:16], B[0:16], A[16:32], B[16:32]: the
//         low nibbles of A and B meet x's first 32 bytes and the high ones its last 32 in the
//         same lanes, so the two add up in one dot4_partial run (|sum| <= 4 * 15 * 127) and take
//         one scale; the lanes start from -8 times the sum of their x, ending as sum (q - 8) x.
//   Q8_0: signed weights: |w| is the unsigned operand and x takes w's sign (a pair of products
//         is at most 2 * 128 * 127, inside int16).
//   Q4_K: nibbles q per 32-weight sub-block; the sub-block minimums come off through the sums of
//         the quantized x (int8_x.h), added into the same lanes once per super-block.
// Passes of weight rows as in row_dots_avx2.cpp (simd_avx2.h): the bits of an output depend on
// its weight row and x row only.
#include "kernels/quant/row_dots.h"
#include "kernels/quant/type_kernels.h"

#include "kernels/isa.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && \
    !(defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__))
#include <immintrin.h>

#include "kernels/quant/block_formats.h"
#include "kernels/quant/simd_avx2.h"
#define DIFFTX_ROW_DOTS_INT8_AVX2 1
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {

#ifdef DIFFTX_ROW_DOTS_INT8_AVX2
namespace {

struct Q4_0Dots {
  template <int M, int R>
  static void pass(const WeightMatrix& W, const PreparedX* px, const Rows& rows, int first, float* out) {
    const int64_t blocks = W.cols / kQ4_0Weights;
    const __m256i low = _mm256_set1_epi8(0xF);
    PassAcc<M, R> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 2) {
      const int64_t p = b / 2, other = std::min(b + 1, blocks - 1);  // an odd last block pairs with itself (x is 0)
      for (int r = 0; r < R; ++r) {
        const BlockQ4_0 *A = rows.blocks<BlockQ4_0>(first + r) + b, *B = rows.blocks<BlockQ4_0>(first + r) + other;
        rows.prefetch(first + r, b * static_cast<int64_t>(sizeof(BlockQ4_0)));
        const __m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i*)B->qs), _mm_loadu_si128((const __m128i*)A->qs));
        const __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        // lanes 0-3 are A's, 4-7 B's
        const __m128 both = _mm_cvtph_ps(_mm_cvtsi32_si128(A->d | (static_cast<uint32_t>(B->d) << 16)));
        const __m256 dw = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(both), _mm256_set_epi32(1, 1, 1, 1, 0, 0, 0, 0));
        for (int j = 0; j < M; ++j) {
          const int8_t* xq = px[j].q.data() + 64 * p;
          const int32_t* offset = px[j].lane_offsets.data() + 16 * p;
          const __m256i both = dot4_partial(dot4_partial(_mm256_setzero_si256(), lo, _mm256_loadu_si256((const __m256i*)xq)),
                                            hi, _mm256_loadu_si256((const __m256i*)(xq + 32)));
          const __m256i start = _mm256_add_epi32(_mm256_loadu_si256((const __m256i*)offset),
                                                 _mm256_loadu_si256((const __m256i*)(offset + 8)));
          const __m256i dot = _mm256_add_epi32(dot4_lanes(both), start);
          const __m256 scale = _mm256_mul_ps(dw, _mm256_loadu_ps(px[j].lane_scales.data() + 16 * p));
          acc[j][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[j][r]);
        }
      }
    }
    finish_pass<M, R>(acc, first, out);
  }
};

// x's blocks one after another (the pairs A then B); block b's lane scales are lane_scales[8b ..).
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
        const __m256i w = _mm256_loadu_si256((const __m256i*)blk->qs);
        const __m256i magnitude = _mm256_abs_epi8(w);  // -128 becomes the unsigned byte 128
        const __m256 dw = _mm256_set1_ps(_cvtsh_ss(blk->d));
        for (int j = 0; j < M; ++j) {
          const __m256i x = _mm256_loadu_si256((const __m256i*)(px[j].q.data() + 32 * b));
          const __m256i dot = dot4_add(_mm256_setzero_si256(), magnitude, _mm256_sign_epi8(x, w));
          const __m256 scale = _mm256_mul_ps(dw, _mm256_loadu_ps(px[j].lane_scales.data() + 8 * b));
          acc[j][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[j][r]);
        }
      }
    finish_pass<M, R>(acc, first, out);
  }
};

// A 64-weight group g of a super-block: sub-block 2g in the low nibbles of qs[32g .. 32g + 32),
// 2g + 1 in the high ones, x's blocks 8b + 2g and 8b + 2g + 1.
struct Q4_KDots {
  template <int M, int R>
  static void pass(const WeightMatrix& W, const PreparedX* px, const Rows& rows, int first, float* out) {
    const __m256i low = _mm256_set1_epi8(0xF);
    PassAcc<M, R> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm256_setzero_ps();
    for (int64_t b = 0; b < W.cols / kQ4_KWeights; ++b)
      for (int r = 0; r < R; ++r) {
        const BlockQ4_K& blk = rows.blocks<BlockQ4_K>(first + r)[b];
        __m256 scales, mins;
        q4_k_scales_mins(blk, scales, mins);
        for (int j = 0; j < M; ++j)  // lane l: minus dmin m_l times the sum of x' over sub-block l
          acc[j][r] = _mm256_fnmadd_ps(mins, _mm256_loadu_ps(px[j].sums.data() + 8 * b), acc[j][r]);
        for (int g = 0; g < 4; ++g) {
          const int64_t p = 4 * b + g;  // x's pair: sub-blocks 2g, 2g + 1 of super-block b
          rows.prefetch(first + r, b * static_cast<int64_t>(sizeof(BlockQ4_K)) + 16 + 32 * g);
          const __m256i v = _mm256_loadu_si256((const __m256i*)(blk.qs + 32 * g));
          const __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
          const __m256 dw_lo = _mm256_permutevar8x32_ps(scales, _mm256_set1_epi32(2 * g));
          const __m256 dw_hi = _mm256_permutevar8x32_ps(scales, _mm256_set1_epi32(2 * g + 1));
          for (int j = 0; j < M; ++j) {
            const int8_t* xq = px[j].q.data() + 64 * p;
            const float* dx = px[j].lane_scales.data() + 16 * p;
            const __m256i dot_lo = dot4_add(_mm256_setzero_si256(), lo, _mm256_loadu_si256((const __m256i*)xq));
            const __m256i dot_hi = dot4_add(_mm256_setzero_si256(), hi, _mm256_loadu_si256((const __m256i*)(xq + 32)));
            acc[j][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_lo), _mm256_mul_ps(dw_lo, _mm256_loadu_ps(dx)), acc[j][r]);
            acc[j][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_hi), _mm256_mul_ps(dw_hi, _mm256_loadu_ps(dx + 8)), acc[j][r]);
          }
        }
      }
    finish_pass<M, R>(acc, first, out);
  }
};

}  // namespace

void register_row_dots_int8_avx2(TypeKernelTable& table) {
  table[WeightType::q4_0].row_dots_int8 = by_x_rows<InPasses<Q4_0Dots>>;
  table[WeightType::q8_0].row_dots_int8 = by_x_rows<InPasses<Q8_0Dots>>;
  table[WeightType::q4_k].row_dots_int8 = by_x_rows<InPasses<Q4_KDots>>;
}
#else
void register_row_dots_int8_avx2(TypeKernelTable&) {}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA::quant
