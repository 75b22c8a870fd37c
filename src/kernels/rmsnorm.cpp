// RMSNorm forward and backward (docs/SPEC.md §1; also the DIFF V1 headwise norm of docs/SPEC.md §2.2, which is
// the same op over rows = B*T*H of width 2d with one shared gain).
#include <cmath>

#include "core/error.h"
#include "core/threading.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {

void check_shape(const char* op, int64_t rows, int64_t n) {
  DIFFTX_CHECK(rows >= 0, op, ": rows must be >= 0, got ", rows);
  DIFFTX_CHECK(n > 0, op, ": row width n must be > 0, got ", n);
}

// dg[j] += dy[j] * x[j] * rstd over columns [begin, end) of one row. Both backward schedules
// below add rows in ascending order with this same expression, so dg is bitwise the same
// whatever the thread count.
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
  check_shape("rmsnorm_forward", rows, n);
  DIFFTX_CHECK(eps >= 0, "rmsnorm_forward: eps must be >= 0, got ", eps);
#pragma omp parallel for schedule(static) if (worth_parallel(rows * n))
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float sum_sq = 0;
#pragma omp simd reduction(+ : sum_sq)
    for (int64_t j = 0; j < n; ++j) sum_sq += xr[j] * xr[j];
    const float rs = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sum_sq) / n + eps));
    rstd[r] = rs;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] * rs * g[j];
  }
}

void rmsnorm_backward(const float* x, const float* g, const float* rstd, const float* dy, float* dx,
                      float* dg, int64_t rows, int64_t n) {
  check_shape("rmsnorm_backward", rows, n);
  if (!worth_parallel(rows * n) || thread_count() == 1) {
    // One pass: each row is still in L1 when its gain gradient is added.
    for (int64_t r = 0; r < rows; ++r) {
      row_input_grad(x + r * n, g, rstd[r], dy + r * n, dx + r * n, n);
      add_gain_grad(x + r * n, dy + r * n, rstd[r], dg, 0, n);
    }
    return;
  }
  // Threads split the rows for dx, then the columns for dg (no per-thread copies of dg).
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      row_input_grad(x + r * n, g, rstd[r], dy + r * n, dx + r * n, n);
    const ColumnShare mine = column_share(n);
    for (int64_t r = 0; r < rows; ++r)
      add_gain_grad(x + r * n, dy + r * n, rstd[r], dg, mine.begin, mine.end);
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA
