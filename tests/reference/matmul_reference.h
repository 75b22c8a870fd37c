// The weight-matrix product in double (kernels/quant/matmul.h): each weight dequantized, each
// output one sum in double. The twin every backend's matmul is tested against.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/quant/matmul.h"

namespace difftx::reference {

// y[N, rows] (= or +=) x[N, cols] W^T.
void matmul(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate = false);

// x as the CPU's int8 products take it (kernels/quant/int8_x.h): each 32-block rounded to d q,
// d = max |x| / 127 and q = round(x / d), both in F32 as the kernels compute them; d q exactly,
// in double. cols is a multiple of 32.
std::vector<double> int8_rounded_x(const float* x, int64_t N, int64_t cols);

// The product the int8 paths compute (MatmulPath::simd_int8 where the level has one for W's
// block type): matmul of int8_rounded_x(x). Every term, Q4_K's minimums included, sees the same
// rounded x, so a kernel differs from this by its F32 rounding alone.
void matmul_int8_x(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate = false);

}  // namespace difftx::reference
