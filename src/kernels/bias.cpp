// A projection's bias (bias.h), compiled per CPU level (kernels/isa.h).
#include "kernels/bias.h"

#include "core/error.h"
#include "kernels/op_threading.h"

namespace difftx::kernels::DIFFTX_ISA {

void add_bias(float* y, const float* bias, int64_t rows, int64_t cols) {
  DIFFTX_CHECK(rows >= 0 && cols >= 1, "add_bias: rows must be >= 0 and cols >= 1, got rows=", rows, " cols=", cols);
  DIFFTX_CHECK(rows == 0 || (y && bias), "add_bias: tensors y and bias must not be null");
#pragma omp parallel for schedule(static) if (worth_parallel(rows * cols))
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] += bias[c];
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA
