// LayerNorm with a bias (layernorm.h), compiled per CPU level (kernels/isa.h). Rows run in
// parallel; a row's mean and variance are two passes over it (the variance of the centred
// values, not E[x^2] - mean^2).
#include "kernels/layernorm.h"

#include "kernels/norm_rows.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {

// dx of one row: g = dy w, dx = rstd (g - mean(g) - xhat mean(g xhat)).
void row_input_grad(const float* x, const float* w, float mean, float rstd, const float* dy, float* dx, int64_t n) {
  float sum_g = 0, sum_gx = 0;
#pragma omp simd reduction(+ : sum_g, sum_gx)
  for (int64_t j = 0; j < n; ++j) {
    const float g = dy[j] * w[j];
    sum_g += g;
    sum_gx += g * (x[j] - mean) * rstd;
  }
  const float mean_g = sum_g / static_cast<float>(n), mean_gx = sum_gx / static_cast<float>(n);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) dx[j] = rstd * (dy[j] * w[j] - mean_g - (x[j] - mean) * rstd * mean_gx);
}

// dw[j] += dy[j] xhat[j] and db[j] += dy[j] over columns [begin, end) of one row.
void add_param_grads(const float* x, float mean, float rstd, const float* dy, float* dw, float* db, int64_t begin,
                     int64_t end) {
#pragma omp simd
  for (int64_t j = begin; j < end; ++j) {
    dw[j] += dy[j] * (x[j] - mean) * rstd;
    db[j] += dy[j];
  }
}

}  // namespace

void layernorm_forward(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                       int64_t rows, int64_t n, float eps) {
  forward_rows("layernorm_forward", rows, n, eps, [&](int64_t r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += xr[j];
    const float mu = sum / static_cast<float>(n);
    float sum_sq = 0;
#pragma omp simd reduction(+ : sum_sq)
    for (int64_t j = 0; j < n; ++j) sum_sq += (xr[j] - mu) * (xr[j] - mu);
    const float rs = inverse_rms(sum_sq, n, eps);
    mean[r] = mu;
    rstd[r] = rs;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] - mu) * rs * w[j] + b[j];
  });
}

void layernorm_backward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy,
                        float* dx, float* dw, float* db, int64_t rows, int64_t n) {
  backward_rows(
      "layernorm_backward", rows, n,
      [&](int64_t r) { row_input_grad(x + r * n, w, mean[r], rstd[r], dy + r * n, dx + r * n, n); },
      [&](int64_t r, int64_t begin, int64_t end) {
        add_param_grads(x + r * n, mean[r], rstd[r], dy + r * n, dw, db, begin, end);
      });
}

}  // namespace difftx::kernels::DIFFTX_ISA
