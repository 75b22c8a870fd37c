// Row dots with int8 dot products (AVX-512 VNNI vpdpbusd: unsigned bytes times signed bytes,
// summed four at a time into int32 lanes), the scheme llama.cpp uses: x quantized per 32-block
// (prepare_x.cpp), weights as unsigned bytes. Per 64 weights (two 32-blocks, 8 lanes each), the
// lanes are converted to F32 and scaled by d_w * d_x of their block. Each weight is unpacked
// (nibbles, F16 scales) once for the call's M rows of x.
//   Q4_0: nibbles q in [0, 15]; the lanes start from -8 times the sum of their x, ending as
//         sum (q - 8) x.
//   Q8_0: signed weights: |w| is the unsigned operand and x takes w's sign.
//   Q4_K: nibbles q; the sub-block minimums come off once per row, through the sums of the
//         quantized x (prepare_x's px.sums: int8_x.h says why not those of x itself).
#include "kernels/quant/row_dots.h"
#include "kernels/quant/type_kernels.h"

#include <algorithm>

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>

#include "kernels/quant/block_formats.h"
#include "kernels/quant/simd_avx2.h"
#include "kernels/quant/simd_avx512.h"
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
namespace {

// Two F16 scales as F32 lanes: `first` on the lanes of the first block, `second` on the others.
// interleaved: lanes 0-3, 8-11 first (Q4_0's order); else lanes 0-7.
inline __m512 two_f16_scales(uint16_t first, uint16_t second, bool interleaved) {
  const __m128 both = _mm_cvtph_ps(_mm_cvtsi32_si128(first | (static_cast<uint32_t>(second) << 16)));
  const __m512i index = interleaved ? _mm512_set_epi32(1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0)
                                    : _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_permutexvar_ps(index, _mm512_castps128_ps512(both));
}

// Bytes lo, hi of a 256-bit vector as [lo & 15 | hi >> 4] (nibbles of 32 bytes, low ones first).
inline __m512i nibbles(__m256i bytes) {
  const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(bytes), _mm256_srli_epi16(bytes, 4), 1);
  return _mm512_and_si512(both, _mm512_set1_epi8(0xF));
}

struct Q4_0Dots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    const Rows rows = row_pointers(W, r0, n);
    const int64_t blocks = W.cols / kQ4_0Weights;
    Acc<M> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 2) {
      const int64_t p = b / 2, other = std::min(b + 1, blocks - 1);  // an odd last block pairs with itself (x is 0)
      __m512i xq[M], offset[M];
      __m512 dx[M];
      for (int j = 0; j < M; ++j) {
        xq[j] = _mm512_loadu_si512(px[j].q.data() + 64 * p);
        offset[j] = _mm512_loadu_si512(px[j].lane_offsets.data() + 16 * p);
        dx[j] = _mm512_loadu_ps(px[j].lane_scales.data() + 16 * p);
      }
      for (int r = 0; r < kRowsPerDot; ++r) {
        const BlockQ4_0 *A = rows.blocks<BlockQ4_0>(r) + b, *B = rows.blocks<BlockQ4_0>(r) + other;
        rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ4_0)));
        const __m256i ab = _mm256_set_m128i(_mm_loadu_si128((const __m128i*)B->qs), _mm_loadu_si128((const __m128i*)A->qs));
        const __m512i q = nibbles(ab);  // [A.lo, B.lo, A.hi, B.hi]
        const __m512 dw = two_f16_scales(A->d, B->d, true);
        for (int j = 0; j < M; ++j) {
          const __m512i dot = _mm512_dpbusd_epi32(offset[j], q, xq[j]);
          acc[j][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, dx[j]), acc[j][r]);
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
    const int64_t blocks = W.cols / kQ8_0Weights;
    Acc<M> acc;
    for (auto& row : acc)
      for (auto& a : row) a = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 2) {
      const int64_t p = b / 2, other = std::min(b + 1, blocks - 1);
      __m512i xq[M];
      __m512 dx[M];
      for (int j = 0; j < M; ++j) {
        xq[j] = _mm512_loadu_si512(px[j].q.data() + 64 * p);
        dx[j] = _mm512_loadu_ps(px[j].lane_scales.data() + 16 * p);
      }
      for (int r = 0; r < kRowsPerDot; ++r) {
        const BlockQ8_0 *A = rows.blocks<BlockQ8_0>(r) + b, *B = rows.blocks<BlockQ8_0>(r) + other;
        rows.prefetch(r, b * static_cast<int64_t>(sizeof(BlockQ8_0)));
        rows.prefetch(r, other * static_cast<int64_t>(sizeof(BlockQ8_0)));
        const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i*)A->qs)),
                                             _mm256_loadu_si256((const __m256i*)B->qs), 1);
        const __mmask64 negative = _mm512_movepi8_mask(w);
        const __m512i magnitude = _mm512_abs_epi8(w);
        const __m512 dw = two_f16_scales(A->d, B->d, false);
        for (int j = 0; j < M; ++j) {
          const __m512i signed_x = _mm512_mask_sub_epi8(xq[j], negative, _mm512_setzero_si512(), xq[j]);
          const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), magnitude, signed_x);
          acc[j][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, dx[j]), acc[j][r]);
        }
      }
    }
    finish<M>(acc, nullptr, n, out);
  }
};

// A 64-weight group g of a super-block: sub-block 2g in the low nibbles of qs[32g .. 32g + 32),
// 2g + 1 in the high ones, so the unpacked bytes are in x's own order. The minimums come off
// as sum_j dmin m_j (sum of x' = d q over sub-block j), 8 sub-blocks in one vector multiply-add.
struct Q4_KDots {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    const Rows rows = row_pointers(W, r0, n);
    Acc<M> acc;
    __m256 min_acc[M][kRowsPerDot];
    for (int j = 0; j < M; ++j)
      for (int r = 0; r < kRowsPerDot; ++r) acc[j][r] = _mm512_setzero_ps(), min_acc[j][r] = _mm256_setzero_ps();
    // lanes 0-7 take sub-block 2g's scale, lanes 8-15 sub-block 2g + 1's
    const __m512i spread[4] = {_mm512_set_epi64(0x100000001, 0x100000001, 0x100000001, 0x100000001, 0, 0, 0, 0),
                               _mm512_set_epi64(0x300000003, 0x300000003, 0x300000003, 0x300000003, 0x200000002,
                                                0x200000002, 0x200000002, 0x200000002),
                               _mm512_set_epi64(0x500000005, 0x500000005, 0x500000005, 0x500000005, 0x400000004,
                                                0x400000004, 0x400000004, 0x400000004),
                               _mm512_set_epi64(0x700000007, 0x700000007, 0x700000007, 0x700000007, 0x600000006,
                                                0x600000006, 0x600000006, 0x600000006)};
    for (int64_t b = 0; b < W.cols / kQ4_KWeights; ++b) {
      for (int r = 0; r < kRowsPerDot; ++r) {
        const BlockQ4_K& blk = rows.blocks<BlockQ4_K>(r)[b];
        __m256 scales, mins;
        q4_k_scales_mins(blk, scales, mins);
        for (int j = 0; j < M; ++j)
          min_acc[j][r] = _mm256_fmadd_ps(mins, _mm256_loadu_ps(px[j].sums.data() + 8 * b), min_acc[j][r]);
        const __m512 scales16 = _mm512_castps256_ps512(scales);
        for (int g = 0; g < 4; ++g) {
          const int64_t p = 4 * b + g;  // pair index = sub-blocks 2g, 2g + 1 of super-block b
          _mm_prefetch(reinterpret_cast<const char*>(blk.qs + 32 * g) + rows.ahead, _MM_HINT_T0);
          const __m512i q = nibbles(_mm256_loadu_si256((const __m256i*)(blk.qs + 32 * g)));
          const __m512 dw = _mm512_permutexvar_ps(spread[g], scales16);
          for (int j = 0; j < M; ++j) {
            const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, _mm512_loadu_si512(px[j].q.data() + 64 * p));
            const __m512 scale = _mm512_mul_ps(dw, _mm512_loadu_ps(px[j].lane_scales.data() + 16 * p));
            acc[j][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[j][r]);
          }
        }
      }
    }
    float minimums[M][kRowsPerDot];
    for (int j = 0; j < M; ++j)
      for (int r = 0; r < kRowsPerDot; ++r) {
        const __m256 v = min_acc[j][r];
        const __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        minimums[j][r] = -(_mm_cvtss_f32(m) + _mm_cvtss_f32(_mm_shuffle_ps(m, m, 1)) +
                           _mm_cvtss_f32(_mm_shuffle_ps(m, m, 2)) + _mm_cvtss_f32(_mm_shuffle_ps(m, m, 3)));
      }
    finish<M>(acc, minimums, n, out);
  }
};

}  // namespace

void register_row_dots_vnni(TypeKernelTable& table) {
  table[WeightType::q4_0].row_dots_int8 = by_x_rows<Q4_0Dots>;
  table[WeightType::q8_0].row_dots_int8 = by_x_rows<Q8_0Dots>;
  table[WeightType::q4_k].row_dots_int8 = by_x_rows<Q4_KDots>;
}
#else
void register_row_dots_vnni(TypeKernelTable&) {}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA::quant
