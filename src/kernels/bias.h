// The bias of a biased projection (Phi-4-mini-flash's Wqkv and out_proj): y[r, c] += bias[c] over
// rows of width cols, after the product y = x W^T (kernels/quant/matmul.h). The twin in double is
// tests/reference/bias_reference.h.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {

void add_bias(float* y, const float* bias, int64_t rows, int64_t cols);

}  // namespace difftx::kernels::DIFFTX_ISA
