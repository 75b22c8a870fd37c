#include "reference/layernorm_reference.h"

#include <cmath>

namespace difftx::reference {

void layernorm_forward(const double* x, const double* w, const double* b, double* y, double* mean, double* rstd,
                       int64_t rows, int64_t n, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * n;
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += xr[j];
    mu /= n;
    for (int64_t j = 0; j < n; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    mean[r] = mu;
    rstd[r] = 1.0 / std::sqrt(var / n + eps);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = (xr[j] - mu) * rstd[r] * w[j] + b[j];
  }
}

void layernorm_backward(const double* x, const double* w, const double* mean, const double* rstd, const double* dy,
                        double* dx, double* dw, double* db, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * n;
    const double* dyr = dy + r * n;
    double mean_g = 0, mean_gx = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double xhat = (xr[j] - mean[r]) * rstd[r];
      mean_g += dyr[j] * w[j] / n;
      mean_gx += dyr[j] * w[j] * xhat / n;
      dw[j] += dyr[j] * xhat;
      db[j] += dyr[j];
    }
    for (int64_t j = 0; j < n; ++j)
      dx[r * n + j] = rstd[r] * (dyr[j] * w[j] - mean_g - (xr[j] - mean[r]) * rstd[r] * mean_gx);
  }
}

}  // namespace difftx::reference
