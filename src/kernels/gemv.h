// Matrix-vector product for one-token decoding, where every weight is read once per token and
// the memory stream, not arithmetic, sets the pace (a GEMM with M = 1 repacks the weights on
// every call in OpenBLAS 0.3.21, several times slower):
//   y[out] = W[out, in] x[in]        (accumulate = false)
//   y[out] += W[out, in] x[in]       (accumulate = true; a residual add for free)
// W row-major as the model stores linear weights (docs/SPEC.md §1: [out, in], y = x W^T). Rows are
// split over OpenMP threads; every row is one dot product, so results do not depend on the
// thread count. It is matmul's gemv order at one row of x (kernels/quant/matmul.h): each row of
// a batched product there has the bits gemv gives that row alone.
#pragma once
#include <cstdint>

namespace difftx {

void gemv(const float* W, const float* x, float* y, int64_t out, int64_t in, bool accumulate = false);

// The reference twin (tests): sums in double.
void gemv_reference(const float* W, const float* x, float* y, int64_t out, int64_t in, bool accumulate = false);

}  // namespace difftx
