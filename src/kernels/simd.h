// Google Highway for the per-level sources (docs/ARCHITECTURE.md "CPU levels"): each level's own
// compile takes Highway's static target from its flags (x86-64-v2: SSE4, x86-64-v3: AVX2,
// x86-64-v4: AVX3, arm64: NEON), with no dynamic dispatch, so that the level table stays the
// one dispatch. HWY_DISABLE_PCLMUL_AES: Highway 1.0.3 otherwise asks for PCLMUL and AES before
// it takes SSE4, AVX2 or AVX3 (detect_targets.h), and would fall to SSSE3 code; no kernel uses them.
// Highway's ops are static inline functions in hwy::HWY_NAMESPACE; what the kernels build on
// them lives in difftx::kernels::DIFFTX_ISA, so two levels never share a symbol.
#pragma once
#define HWY_DISABLE_PCLMUL_AES
// On arm64, Highway 1.0.3 supports its runtime dispatch (which difftx does not use) by giving
// every op target("+crypto"), and GCC then refuses to inline the ops into code compiled for the
// level's own -march; this macro (meant for toolchains without sys/auxv.h) turns that support
// off, so the ops carry no target attribute there, as on x86 where the level's flags cover them.
#define TOOLCHAIN_MISS_SYS_AUXV_H
#include <hwy/highway.h>

#include "kernels/isa.h"

// 1 where the level's target has fused multiply-add and the kernels run their vector loops:
// x86 AVX2 and AVX3, and NEON. The x86-64-v2 baseline (SSE4, no FMA) keeps its portable loops,
// whose bits are that level's.
#if HWY_TARGET <= HWY_AVX2 || HWY_ARCH_ARM
#define DIFFTX_SIMD_FMA 1
#else
#define DIFFTX_SIMD_FMA 0
#endif

namespace difftx::kernels::DIFFTX_ISA {
namespace hn = hwy::HWY_NAMESPACE;

using FloatTag = hn::ScalableTag<float>;  // the level's widest float vector
using FloatVec = hn::Vec<FloatTag>;

// Sum of the lanes as a halving tree (upper half onto lower half, down to one lane): the order
// of _mm512_reduce_add_ps and of the AVX2 kernels' horizontal sums, so every width sums the lanes
// of a 16-float group alike.
template <class D>
inline float sum_halves(D d, hn::Vec<D> v) {
  if constexpr (hn::MaxLanes(d) == 1) {
    return hn::GetLane(v);
  } else {
    const hn::Half<D> dh;
    return sum_halves(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
}

// Transposes the square block of Lanes(d) vectors in place: v[i] lane j becomes v[j] lane i.
// Within each 128-bit block, pairs of rows interleave (32-bit lanes) and then pairs of pairs
// (64-bit lanes), which transposes every 4 x 4 block; the blocks then trade places (AVX2: halves;
// AVX3: halves, then neighbouring blocks).
template <class D>
inline void transpose_square(D d, hn::Vec<D>* v) {
  constexpr size_t kN = hn::MaxLanes(D());
  static_assert(kN == 4 || kN == 8 || kN == 16, "a square of 4, 8 or 16 float lanes");
  const hn::Repartition<uint64_t, D> d64;
  hn::Vec<D> t[kN];
  for (size_t i = 0; i < kN; i += 2) {
    t[i] = hn::InterleaveLower(d, v[i], v[i + 1]);
    t[i + 1] = hn::InterleaveUpper(d, v[i], v[i + 1]);
  }
  for (size_t g = 0; g < kN; g += 4) {  // v[g + q], block b: rows g .. g + 3 at column 4b + q
    const auto a0 = hn::BitCast(d64, t[g]), a1 = hn::BitCast(d64, t[g + 1]);
    const auto a2 = hn::BitCast(d64, t[g + 2]), a3 = hn::BitCast(d64, t[g + 3]);
    v[g] = hn::BitCast(d, hn::InterleaveLower(d64, a0, a2));
    v[g + 1] = hn::BitCast(d, hn::InterleaveUpper(d64, a0, a2));
    v[g + 2] = hn::BitCast(d, hn::InterleaveLower(d64, a1, a3));
    v[g + 3] = hn::BitCast(d, hn::InterleaveUpper(d64, a1, a3));
  }
  if constexpr (kN == 8) {  // column 4b + q is block b of v[q] and of v[4 + q]
    for (size_t q = 0; q < 4; ++q) {
      const hn::Vec<D> lo = v[q], hi = v[4 + q];
      v[q] = hn::ConcatLowerLower(d, hi, lo);
      v[4 + q] = hn::ConcatUpperUpper(d, hi, lo);
    }
  } else if constexpr (kN == 16) {  // column 4b + q is block b of v[q], v[4 + q], v[8 + q], v[12 + q]
    for (size_t q = 0; q < 4; ++q) {
      const hn::Vec<D> e0 = hn::ConcatLowerLower(d, v[8 + q], v[q]), e1 = hn::ConcatUpperUpper(d, v[8 + q], v[q]);
      const hn::Vec<D> e2 = hn::ConcatLowerLower(d, v[12 + q], v[4 + q]),
                       e3 = hn::ConcatUpperUpper(d, v[12 + q], v[4 + q]);
      v[q] = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(e2), e0);
      v[4 + q] = hn::OddEvenBlocks(e2, hn::SwapAdjacentBlocks(e0));
      v[8 + q] = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(e3), e1);
      v[12 + q] = hn::OddEvenBlocks(e3, hn::SwapAdjacentBlocks(e1));
    }
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA
