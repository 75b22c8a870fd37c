// Helpers of the AVX2 row dots (row_dots_avx2.cpp, row_dots_int8_avx2.cpp; row_dots_vnni.cpp takes
// its Q4_K unpacking) and int8 GEMM (gemm_int8.cpp); included only where those are compiled (AVX2,
// FMA and F16C, which the AVX-512 levels have too), in an unnamed namespace so that each
// translation unit has its own copy whatever the compiler flags of the others.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quant/block_formats.h"
#include "kernels/quant/row_dots.h"

namespace difftx::kernels::DIFFTX_ISA::quant {
namespace {

// Runs pass.template operator()<R>(rows, first) over the call's weight rows so that a pass holds
// at most 8 accumulators (R rows times M rows of x): one pass of 4 rows for M <= 2, else passes
// of 2 (the second only when there are more than 2 rows).
template <int M, class Pass>
inline void in_passes(const Rows& rows, Pass&& pass) {
  static_assert(kRowsPerDot == 4 && M >= 1 && M <= 4);
  if constexpr (M <= 2) {
    pass.template operator()<4>(rows, 0);
  } else {
    pass.template operator()<2>(rows, 0);
    if (rows.n > 2) pass.template operator()<2>(rows, 2);
  }
}

// A kernel of passes (K::pass<M, R>(W, px, rows, first, out), from the weight row `first` on) as
// the RowDots form's K::run<M>, over the call's rows in in_passes' passes.
template <class K>
struct InPasses {
  template <int M>
  static void run(const WeightMatrix& W, const PreparedX* px, int64_t r0, int n, float* out) {
    in_passes<M>(row_pointers(W, r0, n),
                 [&]<int R>(const Rows& rows, int first) { K::template pass<M, R>(W, px, rows, first, out); });
  }
};

// The sum of 8 lanes in a fixed order: halves, then pairs, then the last two.
inline float sum8(__m256 v) {
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// A pass's accumulators, one per (x row j < M, weight row r < R), and their sums into
// out[j * kRowsPerDot + first + r].
template <int M, int R>
using PassAcc = __m256[M][R];

template <int M, int R>
void finish_pass(const PassAcc<M, R>& acc, int first, float* out) {
  for (int j = 0; j < M; ++j)
    for (int r = 0; r < R; ++r) out[j * kRowsPerDot + first + r] = sum8(acc[j][r]);
}

// A Q4_K super-block's 8 sub-block scales d * sc and minimums dmin * m as F32 lanes.
inline void q4_k_scales_mins(const BlockQ4_K& blk, __m256& scales, __m256& mins) {
  uint8_t unpacked[16];
  q4_k_scales_and_mins(blk.scales, unpacked);
  const __m128i sm = _mm_loadu_si128((const __m128i*)unpacked);
  scales = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(blk.d)), _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sm)));
  mins = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(blk.dmin)),
                       _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(sm, sm))));
}

// The int8 dot products, unsigned bytes u times signed bytes s, four a lane: lane i of
// dot4_add(acc, u, s) is acc[i] + u[4i] s[4i] + ... + u[4i + 3] s[4i + 3]. A run of steps from
// zero may go through dot4_partial and end in dot4_lanes (AVX2 keeps it in int16 pairs and widens
// once). With AVX-VNNI (the avxvnni level) a step is one vpdpbusd, exact in int32; else vpmaddubsw,
// whose int16 pair sums saturate, and vpmaddwd. Contract: each pair sum u[2k] s[2k] + u[2k + 1]
// s[2k + 1], and a dot4_partial run's total of them, stays inside int16, so that both are exact
// and the two levels give the same bits. The kernels' operands: x in [-127, 127] (int8_x.h) times
// |w| <= 128 (a pair <= 32512) or nibbles <= 15 (8 steps <= 30480).
#ifdef __AVXVNNI__
inline __m256i dot4_add(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
inline __m256i dot4_partial(__m256i partial, __m256i u, __m256i s) { return dot4_add(partial, u, s); }
inline __m256i dot4_lanes(__m256i partial) { return partial; }
#else
inline __m256i dot4_add(__m256i acc, __m256i u, __m256i s) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
}
inline __m256i dot4_partial(__m256i partial, __m256i u, __m256i s) { return _mm256_add_epi16(partial, _mm256_maddubs_epi16(u, s)); }
inline __m256i dot4_lanes(__m256i partial) { return _mm256_madd_epi16(partial, _mm256_set1_epi16(1)); }
#endif

}  // namespace
}  // namespace difftx::kernels::DIFFTX_ISA::quant
