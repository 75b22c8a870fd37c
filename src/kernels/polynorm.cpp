// PolyNorm (polynorm.h). With y_k = z^k s_k, s_k = 1 / rho(z^k), the k-th term is c_k y_k
// (c_3 = w0, c_2 = w1, c_1 = w2). Backward of one row, p = dh * u:
//   du = dh * PolyNorm(z);  dc_k += <p, y_k>;  db += sum(p);
//   dz += k z^(k-1) s_k (c_k p - y_k mean(c_k p * y_k))   (RMSNorm's backward without a gain).
// Rows run in parallel; the stats of a row are summed in double.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/polynorm.h"

namespace difftx::kernels {
namespace {

// s_1, s_2, s_3 of one row.
template <typename Real>
void row_scales(const Real* z, int64_t F, double s[3]) {
  double m[3] = {0, 0, 0};
  for (int64_t i = 0; i < F; ++i) {
    const double x = z[i], x2 = x * x;
    m[0] += x2;
    m[1] += x2 * x2;
    m[2] += x2 * x2 * x2;
  }
  for (int k = 0; k < 3; ++k) s[k] = 1.0 / std::sqrt(m[k] / static_cast<double>(F) + kPolyNormEps);
}

void check(const char* what, const void* g, const void* u, const void* w, const void* b, int64_t rows, int64_t F) {
  DIFFTX_CHECK(rows >= 0 && F >= 1, what, ": rows must be >= 0 and F >= 1, got rows=", rows, " F=", F);
  DIFFTX_CHECK(g && u && w && b, what, ": tensors g, u, w and b must not be null");
}

}  // namespace

void polynorm_glu_forward(const float* g, const float* u, const float* w, const float* b, float* h, int64_t rows,
                          int64_t F) {
  check("polynorm_glu_forward", g, u, w, b, rows, F);
#pragma omp parallel for schedule(static) if (worth_parallel(rows * F))
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = g + r * F;
    double s[3];
    row_scales(z, F, s);
    const float c1 = static_cast<float>(w[2] * s[0]), c2 = static_cast<float>(w[1] * s[1]),
                c3 = static_cast<float>(w[0] * s[2]), bias = b[0];
    float* y = h + r * F;
    const float* ur = u + r * F;
#pragma omp simd
    for (int64_t i = 0; i < F; ++i) {
      const float x = z[i];
      y[i] = (((c3 * x + c2) * x + c1) * x + bias) * ur[i];
    }
  }
}

void polynorm_glu_backward(const float* g, const float* u, const float* w, const float* b, const float* dh, float* dg,
                           float* du, float* dw, float* db, int64_t rows, int64_t F) {
  check("polynorm_glu_backward", g, u, w, b, rows, F);
  DIFFTX_CHECK(dh && dg && du && dw && db, "polynorm_glu_backward: tensors dh, dg, du, dw and db must not be null");
  std::vector<double> partial(rows * 4);  // per row: dw0, dw1, dw2, db
#pragma omp parallel for schedule(static) if (worth_parallel(rows * F))
  for (int64_t r = 0; r < rows; ++r) {
    const float *z = g + r * F, *ur = u + r * F, *dy = dh + r * F;
    double s[3];
    row_scales(z, F, s);
    // Pass 1: the per-term sums <p, y_k> (they give dw and, times c_k / F, RMSNorm's mean term).
    double py[3] = {0, 0, 0}, psum = 0;
    for (int64_t i = 0; i < F; ++i) {
      const double x = z[i], p = static_cast<double>(dy[i]) * ur[i];
      py[0] += p * x * s[0];
      py[1] += p * x * x * s[1];
      py[2] += p * x * x * x * s[2];
      psum += p;
    }
    const double c[3] = {w[2], w[1], w[0]};  // coefficient of y_1, y_2, y_3
    double* part = partial.data() + r * 4;
    part[0] = py[2];
    part[1] = py[1];
    part[2] = py[0];
    part[3] = psum;
    // mean(c_k p y_k) = c_k <p, y_k> / F; dz = sum_k k z^(k-1) s_k c_k (p - y_k <p, y_k> / F).
    float a[3], m[3];
    for (int k = 0; k < 3; ++k) {
      a[k] = static_cast<float>(c[k] * s[k]);
      m[k] = static_cast<float>(py[k] * s[k] / static_cast<double>(F));  // times z^k below gives y_k <p,y_k>/F
    }
    const float bias = b[0];
#pragma omp simd
    for (int64_t i = 0; i < F; ++i) {
      const float x = z[i], x2 = x * x, p = dy[i] * ur[i];
      du[i + r * F] = dy[i] * (((a[2] * x + a[1]) * x + a[0]) * x + bias);
      dg[i + r * F] = a[0] * (p - x * m[0]) + 2.0f * x * a[1] * (p - x2 * m[1]) + 3.0f * x2 * a[2] * (p - x2 * x * m[2]);
    }
  }
  double sums[4] = {0, 0, 0, 0};
  for (int64_t r = 0; r < rows; ++r)
    for (int k = 0; k < 4; ++k) sums[k] += partial[r * 4 + k];
  for (int k = 0; k < 3; ++k) dw[k] += static_cast<float>(sums[k]);
  db[0] += static_cast<float>(sums[3]);
}

}  // namespace difftx::kernels
