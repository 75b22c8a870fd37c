// Single-precision GEMM over OpenBLAS, row-major:
//   C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C
// op(X) is X or X^T. lda/ldb/ldc are row strides of the matrices as stored.
#pragma once
#include <cstdint>
#include <string>

namespace difftx::kernels {

enum class Trans { N, T };

void gemm(Trans ta, Trans tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// Convenience for dense row-major operands (lda/ldb/ldc implied by the shapes).
void gemm(Trans ta, Trans tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          const float* B, float beta, float* C);

// Measured sgemm rate at n x n x n over at least `seconds` (best run): the yardstick for
// MFU-style ratios, taken in the same run as the figure it divides.
double measure_sgemm_gflops(int64_t n = 1024, double seconds = 0.3);

// The kernel family OpenBLAS dispatches to (for example "SkylakeX"), and why it was chosen.
std::string gemm_kernel_name();
std::string gemm_kernel_reason();

}  // namespace difftx::kernels
