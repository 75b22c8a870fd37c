// RMSNorm forward and backward (docs/SPEC.md §1; also the DIFF V1 headwise norm of docs/SPEC.md §2.2, which is
// the same op over rows = B*T*H of width 2d with one shared gain).
#include "kernels/isa.h"
#include "kernels/norm_rows.h"
#include "kernels/ops.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {

// dg[j] += dy[j] * x[j] * rstd over columns [begin, end) of one row.
inline void add_gain_grad(const float* x, const float* dy, float rstd, float* dg, int64_t begin,
                          int64_t end) {
#pragma omp simd
  for (int64_t j = begin; j < end; ++j) dg[j] += dy[j] * x[j] * rstd;
}

// dx of one row: with r = rstd and c = r^3 / n * sum_j(g_j dy_j x_j),
//   dx_k = r g_k dy_k - c x_k.
inline void row_input_grad(const float* x, const float* g, float rstd, const float* dy, float* dx,
                           int64_t n) {
  float dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < n; ++j) dot += g[j] * dy[j] * x[j];
  const float c = static_cast<float>(static_cast<double>(rstd) * rstd * rstd * dot / n);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) dx[j] = rstd * g[j] * dy[j] - c * x[j];
}

}  // namespace

void rmsnorm_forward(const float* x, const float* g, float* y, float* rstd, int64_t rows, int64_t n,
                     float eps) {
  forward_rows("rmsnorm_forward", rows, n, eps, [&](int64_t r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float sum_sq = 0;
#pragma omp simd reduction(+ : sum_sq)
    for (int64_t j = 0; j < n; ++j) sum_sq += xr[j] * xr[j];
    const float rs = inverse_rms(sum_sq, n, eps);
    rstd[r] = rs;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] * rs * g[j];
  });
}

void rmsnorm_backward(const float* x, const float* g, const float* rstd, const float* dy, float* dx,
                      float* dg, int64_t rows, int64_t n) {
  backward_rows(
      "rmsnorm_backward", rows, n,
      [&](int64_t r) { row_input_grad(x + r * n, g, rstd[r], dy + r * n, dx + r * n, n); },
      [&](int64_t r, int64_t begin, int64_t end) { add_gain_grad(x + r * n, dy + r * n, rstd[r], dg, begin, end); });
}

}  // namespace difftx::kernels::DIFFTX_ISA
