// A projection's bias (kernels/bias.h) in double.
#pragma once
#include <cstdint>

namespace difftx::reference {

void add_bias(double* y, const double* bias, int64_t rows, int64_t cols);

}  // namespace difftx::reference
