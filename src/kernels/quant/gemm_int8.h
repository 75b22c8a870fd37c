// Prefill GEMM for the block types with int8 dot products (internal to src/kernels/quant):
//   y[N, rows] (+)= x[N, cols] W^T
// x is quantized per 32-block (Q8_0's rule, as for the int8 decode). Weights are repacked,
// 16 rows at a time, to bytes in the order [cols / 4][16 rows][4], so that one vpdpbusd
// (AVX-512 VNNI; two vpmaddubsw on AVX2) multiplies 4 weights of each of 16 rows by the same 4
// bytes of one x row (broadcast): each int32 lane is one output, no horizontal sums. Per
// 32-block, a lane starts from -offset * (sum of the x block's bytes) (offset 8 for Q4_0; for
// Q8_0 128 where it is stored as w + 128 (VNNI), 0 where stored as w (AVX2); 0 for Q4_K) and
// ends scaled by d_w * d_x; Q4_K's minimums come off with exact x sums.
#pragma once
#include <cstdint>

#include "kernels/quant/matmul.h"

namespace difftx::quant {

// Whether this build has the kernel for W.type (Q8_0, Q4_0, Q4_K with AVX-512 VNNI or AVX2, or
// on ARM with the dotprod extension: gemm_int8_neon.cpp).
bool gemm_int8_available(WeightType type);

void gemm_int8(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate);

}  // namespace difftx::quant
