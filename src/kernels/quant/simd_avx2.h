// Helpers of the AVX2 row dots (row_dots_avx2.cpp, row_dots_int8_avx2.cpp) and int8 GEMM
// (gemm_int8.cpp); included only where those are compiled (AVX2 + FMA + F16C), in an unnamed
// namespace so that each translation unit has its own copy whatever the compiler flags of the
// others.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quant/row_dots.h"

namespace difftx::kernels::DIFFTX_ISA::quant {
namespace {

// The kRowsPerDot weight rows of a call.
struct Rows {
  const uint8_t* p[kRowsPerDot];  // unused slots repeat the last row (their sums are dropped)
  int n;                          // rows in use
  int64_t ahead;                  // bytes to the same place kPrefetchRows rows on (row_dots.h)
  void prefetch(int r, int64_t offset) const {
    _mm_prefetch(reinterpret_cast<const char*>(p[r]) + offset + ahead, _MM_HINT_T0);
  }
};

inline Rows row_pointers(const WeightMatrix& W, int64_t r0, int n) {
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);
  Rows rows;
  rows.n = n;
  rows.ahead = kPrefetchRows * row_bytes;
  for (int i = 0; i < kRowsPerDot; ++i)
    rows.p[i] = static_cast<const uint8_t*>(W.data) + (r0 + std::min(i, n - 1)) * row_bytes;
  return rows;
}

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

// The sum of 8 lanes in a fixed order: halves, then pairs, then the last two.
inline float sum8(__m256 v) {
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
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
