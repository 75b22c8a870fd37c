// Reductions over whole tensors.
#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {

double sum_of_squares(const float* x, int64_t n) {
  DIFFTX_CHECK(n >= 0, "sum_of_squares: n must be >= 0, got ", n);
  double sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum) if (worth_parallel(n))
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return sum;
}

}  // namespace difftx::kernels::DIFFTX_ISA
