#include "reference/ops_reference.h"

#include <cmath>

#include "core/error.h"

namespace difftx::reference {

void rmsnorm_forward(const double* x, const double* g, double* y, double* rstd, int64_t rows,
                     int64_t n, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum_sq = 0;
    for (int64_t j = 0; j < n; ++j) sum_sq += x[r * n + j] * x[r * n + j];
    rstd[r] = 1.0 / std::sqrt(sum_sq / n + eps);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = x[r * n + j] * rstd[r] * g[j];
  }
}

// y_j = x_j r g_j with r = (mean(x^2) + eps)^(-1/2), so dr/dx_k = -r^3 x_k / n and
//   dx_k = r g_k dy_k - (r^3 / n) x_k sum_j dy_j g_j x_j,   dg_j += dy_j x_j r.
void rmsnorm_backward(const double* x, const double* g, const double* rstd, const double* dy,
                      double* dx, double* dg, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += dy[r * n + j] * g[j] * x[r * n + j];
    const double rs = rstd[r];
    for (int64_t k = 0; k < n; ++k)
      dx[r * n + k] = rs * g[k] * dy[r * n + k] - rs * rs * rs / n * x[r * n + k] * dot;
    for (int64_t j = 0; j < n; ++j) dg[j] += dy[r * n + j] * x[r * n + j] * rs;
  }
}

namespace {

// Rotates every pair of every head by sign * (pos0 + t) * theta^(-2i/d).
void rope_rotate(kernels::RopeStyle style, double* x, int64_t B, int64_t T, int64_t heads, int64_t d,
                 int64_t pos0, double theta, double sign) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < d / 2; ++i) {
          const double angle = sign * static_cast<double>(pos0 + t) * std::pow(theta, -2.0 * i / d);
          double* head = x + ((b * T + t) * heads + h) * d;
          const int64_t ia = style == kernels::RopeStyle::interleaved ? 2 * i : i;
          const int64_t ib = style == kernels::RopeStyle::interleaved ? 2 * i + 1 : i + d / 2;
          const double a = head[ia], c = head[ib];
          head[ia] = a * std::cos(angle) - c * std::sin(angle);
          head[ib] = a * std::sin(angle) + c * std::cos(angle);
        }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

bool counts(int32_t target, int64_t row, int64_t V, int32_t ignore_id) {
  if (target == ignore_id) return false;
  DIFFTX_CHECK(target >= 0 && target < V, "reference cross-entropy: target ", target, " at row ",
               row, " is outside [0, ", V, ")");
  return true;
}

}  // namespace

void rope_forward(kernels::RopeStyle style, double* x, int64_t B, int64_t T, int64_t heads, int64_t d,
                  int64_t pos0, double theta) {
  rope_rotate(style, x, B, T, heads, d, pos0, theta, 1.0);
}

void rope_backward(kernels::RopeStyle style, double* dx, int64_t B, int64_t T, int64_t heads, int64_t d,
                   int64_t pos0, double theta) {
  rope_rotate(style, dx, B, T, heads, d, pos0, theta, -1.0);
}

void swiglu_forward(const double* g, const double* u, double* h, int64_t n) {
  for (int64_t i = 0; i < n; ++i) h[i] = g[i] * sigmoid(g[i]) * u[i];
}

void swiglu_backward(const double* g, const double* u, const double* dh, double* dg, double* du,
                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double s = sigmoid(g[i]);
    du[i] = dh[i] * g[i] * s;
    dg[i] = dh[i] * u[i] * (s + g[i] * s * (1 - s));
  }
}

double cross_entropy_sum(const double* logits, const int32_t* targets, int64_t rows, int64_t V,
                         int32_t ignore_id, int64_t* count_out) {
  double loss = 0;
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (!counts(targets[r], r, V, ignore_id)) continue;
    const double* x = logits + r * V;
    double m = x[0];
    for (int64_t j = 1; j < V; ++j) m = std::max(m, x[j]);
    double sum = 0;
    for (int64_t j = 0; j < V; ++j) sum += std::exp(x[j] - m);
    loss += m + std::log(sum) - x[targets[r]];
    ++count;
  }
  *count_out = count;
  return loss;
}

double cross_entropy_forward_backward(const double* logits, const int32_t* targets, double* dlogits,
                                      int64_t rows, int64_t V, int32_t ignore_id,
                                      int64_t* count_out) {
  const double loss_sum = cross_entropy_sum(logits, targets, rows, V, ignore_id, count_out);
  const int64_t count = *count_out;
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = logits + r * V;
    double* dx = dlogits + r * V;
    if (targets[r] == ignore_id) {
      for (int64_t j = 0; j < V; ++j) dx[j] = 0;
      continue;
    }
    double m = x[0];
    for (int64_t j = 1; j < V; ++j) m = std::max(m, x[j]);
    double sum = 0;
    for (int64_t j = 0; j < V; ++j) sum += std::exp(x[j] - m);
    for (int64_t j = 0; j < V; ++j)
      dx[j] = (std::exp(x[j] - m) / sum - (j == targets[r] ? 1.0 : 0.0)) / count;
  }
  return count > 0 ? loss_sum / count : 0.0;
}

void embedding_forward(const double* table, const int32_t* ids, double* y, int64_t rows, int64_t n,
                       int64_t V) {
  for (int64_t r = 0; r < rows; ++r) {
    DIFFTX_CHECK(ids[r] >= 0 && ids[r] < V, "reference embedding: id ", ids[r], " at position ", r,
                 " is outside [0, ", V, ")");
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = table[ids[r] * n + j];
  }
}

void embedding_backward(const int32_t* ids, const double* dy, double* dtable, int64_t rows,
                        int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) dtable[ids[r] * n + j] += dy[r * n + j];
}

void adamw_update(double* p, const double* g, double* m, double* v, int64_t n,
                  const kernels::AdamWParams& hp, double grad_scale) {
  const double t = static_cast<double>(hp.step);
  const double b1 = hp.beta1, b2 = hp.beta2;
  for (int64_t i = 0; i < n; ++i) {
    const double gi = g[i] * grad_scale;
    m[i] = b1 * m[i] + (1 - b1) * gi;
    v[i] = b2 * v[i] + (1 - b2) * gi * gi;
    const double m_hat = m[i] / (1 - std::pow(b1, t));
    const double v_hat = v[i] / (1 - std::pow(b2, t));
    p[i] -=
        static_cast<double>(hp.lr) * (m_hat / (std::sqrt(v_hat) + hp.eps) + hp.weight_decay * p[i]);
  }
}

double sum_of_squares(const double* x, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  return sum;
}

}  // namespace difftx::reference
