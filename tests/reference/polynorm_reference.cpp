// The PolyNorm gate's reference twins (polynorm_reference.h): the plainest loops, in double.
#include "reference/polynorm_reference.h"

#include <cmath>
#include <vector>

#include "kernels/polynorm.h"

namespace difftx::reference {

void polynorm_glu_forward(const double* g, const double* u, const double* w, const double* b, double* h, int64_t rows,
                          int64_t F) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* z = g + r * F;
    double rho[4] = {0, 0, 0, 0};  // rho[k] of z^k
    for (int k = 1; k <= 3; ++k) {
      double sum = 0;
      for (int64_t i = 0; i < F; ++i) sum += std::pow(z[i], 2 * k);
      rho[k] = std::sqrt(sum / F + kernels::kPolyNormEps);
    }
    for (int64_t i = 0; i < F; ++i) {
      const double x = z[i];
      const double poly = w[0] * x * x * x / rho[3] + w[1] * x * x / rho[2] + w[2] * x / rho[1] + b[0];
      h[r * F + i] = poly * u[r * F + i];
    }
  }
}

void polynorm_glu_backward(const double* g, const double* u, const double* w, const double* b, const double* dh,
                           double* dg, double* du, double* dw, double* db, int64_t rows, int64_t F) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* z = g + r * F;
    for (int64_t i = 0; i < F; ++i) dg[r * F + i] = 0;
    for (int k = 1; k <= 3; ++k) {
      const double c = w[3 - k];
      double sum = 0;
      for (int64_t i = 0; i < F; ++i) sum += std::pow(z[i], 2 * k);
      const double s = 1.0 / std::sqrt(sum / F + kernels::kPolyNormEps);
      // y = z^k s; dy (the gradient at y) = c p; dx = s (dy - y mean(dy y)); dz = dx k z^(k-1).
      double dot = 0;  // <p, y>
      for (int64_t i = 0; i < F; ++i) dot += dh[r * F + i] * u[r * F + i] * std::pow(z[i], k) * s;
      dw[3 - k] += dot;
      for (int64_t i = 0; i < F; ++i) {
        const double p = dh[r * F + i] * u[r * F + i], y = std::pow(z[i], k) * s;
        const double dx = s * (c * p - y * c * dot / F);
        dg[r * F + i] += dx * k * std::pow(z[i], k - 1);
      }
    }
    double h_row_sum = 0;
    for (int64_t i = 0; i < F; ++i) h_row_sum += dh[r * F + i] * u[r * F + i];
    db[0] += h_row_sum;
  }
  std::vector<double> poly(rows * F), ones(rows * F, 1.0);
  polynorm_glu_forward(g, ones.data(), w, b, poly.data(), rows, F);  // PolyNorm(z) itself
  for (int64_t i = 0; i < rows * F; ++i) du[i] = dh[i] * poly[i];
}


}  // namespace difftx::reference
