// The bias of a biased projection (Phi-4-mini-flash's Wqkv and out_proj): y[r, c] += bias[c] over
// rows of width cols, after the product y = x W^T (kernels/quant/matmul.h).
#pragma once
#include <cstdint>

namespace difftx {

void add_bias(float* y, const float* bias, int64_t rows, int64_t cols);

namespace reference {
void add_bias(double* y, const double* bias, int64_t rows, int64_t cols);  // the twin in double
}  // namespace reference

}  // namespace difftx
