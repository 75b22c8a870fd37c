// Helpers of the AVX-512 row dots (row_dots_avx512.cpp, row_dots_vnni.cpp); included only where
// AVX-512 is compiled, in an unnamed namespace as simd_avx2.h is.
#pragma once
#include <immintrin.h>

#include "kernels/isa.h"
#include "kernels/quant/row_dots.h"

namespace difftx::kernels::DIFFTX_ISA::quant {
namespace {

// The call's accumulators, one per (x row j < M, weight row i), and their sums plus extra[j][i]
// (none: null) into out[j * kRowsPerDot + i] for the n rows in use.
template <int M>
using Acc = __m512[M][kRowsPerDot];

template <int M>
void finish(const Acc<M>& acc, const float (*extra)[kRowsPerDot], int n, float* out) {
  for (int j = 0; j < M; ++j)
    for (int i = 0; i < n; ++i)
      out[j * kRowsPerDot + i] = _mm512_reduce_add_ps(acc[j][i]) + (extra ? extra[j][i] : 0.0f);
}

}  // namespace
}  // namespace difftx::kernels::DIFFTX_ISA::quant
