#include "reference/diff_clamp_reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace difftx {
namespace {

// Row t of softmax(q_half k_half^T / sqrt(d)) over keys [0, n), with half = 0 (q1, k1) or 1 (q2, k2).
void softmax_row(int64_t t, int64_t n, int64_t d, int half, const float* q, const float* k, double* row) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const float* qt = q + t * 2 * d + half * d;
  double mx = -INFINITY;
  for (int64_t s = 0; s < n; ++s) {
    const float* ks = k + s * 2 * d + half * d;
    double dot = 0;
    for (int64_t x = 0; x < d; ++x) dot += static_cast<double>(qt[x]) * ks[x];
    row[s] = dot * scale;
    mx = std::max(mx, row[s]);
  }
  double sum = 0;
  for (int64_t s = 0; s < n; ++s) sum += (row[s] = std::exp(row[s] - mx));
  for (int64_t s = 0; s < n; ++s) row[s] /= sum;
}

}  // namespace

void diff_clamp_attention_reference(int64_t T, int64_t d, int64_t dv, const float* q, const float* k,
                                    const float* v, float lambda, bool causal, float* out) {
  DIFFTX_CHECK(T >= 1, "diff_clamp attention: T (sequence length) must be >= 1, got ", T);
  DIFFTX_CHECK(d >= 1, "diff_clamp attention: d (half of the q/k width) must be >= 1, got ", d);
  DIFFTX_CHECK(dv >= 1, "diff_clamp attention: dv (value width) must be >= 1, got ", dv);
  DIFFTX_CHECK(q && k && v && out, "diff_clamp attention: tensors q, k, v and out must not be null");
  std::vector<double> a1(T), a2(T);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t n = causal ? t + 1 : T;
    softmax_row(t, n, d, 0, q, k, a1.data());
    softmax_row(t, n, d, 1, q, k, a2.data());
    double sum = 0;
    for (int64_t s = 0; s < n; ++s) sum += (a1[s] = std::max(a1[s] - lambda * a2[s], 0.0));
    const double norm = sum > 0 ? 1.0 / sum : 0.0;  // an all-zero row stays zero
    for (int64_t x = 0; x < dv; ++x) {
      double acc = 0;
      for (int64_t s = 0; s < n; ++s) acc += a1[s] * v[s * dv + x];
      out[t * dv + x] = static_cast<float>(acc * norm);
    }
  }
}

}  // namespace difftx
