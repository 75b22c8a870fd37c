// The weight-matrix product in double (kernels/quant/matmul.h): each weight dequantized, each
// output one sum in double. The twin every backend's matmul is tested against.
#pragma once
#include <cstdint>

#include "kernels/quant/matmul.h"

namespace difftx::reference {

// y[N, rows] (= or +=) x[N, cols] W^T.
void matmul(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate = false);

}  // namespace difftx::reference
