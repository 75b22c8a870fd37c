// Dot products of a few weight rows with one F32 vector, per storage type: the inner loop of
// the decode GEMV (internal to src/kernels/quant).
#pragma once
#include <cstdint>

#include "kernels/quant/matmul.h"

namespace difftx::quant {

constexpr int kRowsPerDot = 4;  // rows per call: each load of x feeds this many rows

// out[i] = W[r0 + i] . x for i < n (1 <= n <= kRowsPerDot). x_sums[b] is the sum of
// x[32b .. 32b + 32) (used by the types with per-block minimums).
using RowDots = void (*)(const WeightMatrix& W, const float* x, const float* x_sums, int64_t r0, int n,
                         float* out);

RowDots row_dots_scalar(WeightType type);
RowDots row_dots_avx512(WeightType type);  // nullptr when AVX-512 is not compiled in
bool avx512_row_dots_compiled();

}  // namespace difftx::quant
