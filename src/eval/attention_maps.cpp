#include "eval/attention_maps.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "kernels/attention/attention_logits.h"

namespace difftx::eval {

std::vector<double> AttentionRow::normalised(int64_t i) const {
  DIFFTX_CHECK(i >= 0 && i < heads, "attention row: head ", i, " outside [0, ", heads, ")");
  const double sum = 1.0 - weight[i];
  std::vector<double> out(head_row(i), head_row(i) + keys());
  for (double& x : out) x = std::fabs(sum) < kMinRowSum ? std::numeric_limits<double>::quiet_NaN() : x / sum;
  return out;
}

AttentionRow attention_row(const kernels::AttentionDims& dims, const float* q, const float* k, const float* lambda,
                           int64_t b, int64_t t) {
  dims.validate();
  DIFFTX_CHECK(q && k, "attention_row: tensors q and k must not be null");
  const kernels::AttentionVariant variant = dims.variant();
  DIFFTX_CHECK(!variant.paired() || lambda, "attention_row (", kernels::attention_kind_name(dims.kind),
               "): tensor lambda must not be null");
  DIFFTX_CHECK(b >= 0 && b < dims.B, "attention_row: batch row ", b, " outside [0, ", dims.B, ")");
  DIFFTX_CHECK(t >= 0 && t < dims.T, "attention_row: query position ", t, " outside the sequence [0, ", dims.T, ")");
  const int64_t T = dims.T, d = dims.d, n = t + 1, qw = dims.q_width(), kw = dims.k_width();
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));

  AttentionRow r;
  r.position = t;
  r.maps = kernels::attention_map_count(dims);
  r.heads = dims.H;
  r.logits.assign(r.maps * n, 0.0);
  r.softmax.assign(r.maps * n, 0.0);
  for (int64_t j = 0; j < r.maps; ++j) {
    const float* qt = q + (b * T + t) * qw + j * d;
    double* logit = r.logits.data() + j * n;
    double* p = r.softmax.data() + j * n;
    double mx = -INFINITY;
    for (int64_t s = 0; s < n; ++s) {
      const float* ks = k + (b * T + s) * kw + variant.key_head(j) * d;
      double dot = 0;
      for (int64_t x = 0; x < d; ++x) dot += static_cast<double>(qt[x]) * ks[x];
      logit[s] = dot * scale;
      mx = std::max(mx, logit[s]);
    }
    double sum = 0;
    for (int64_t s = 0; s < n; ++s) sum += (p[s] = std::exp(logit[s] - mx));
    for (int64_t s = 0; s < n; ++s) p[s] /= sum;
  }

  r.weight.assign(r.heads, 0.0);
  r.head.assign(r.heads * n, 0.0);
  for (int64_t i = 0; i < r.heads; ++i) {
    double* h = r.head.data() + i * n;
    if (!variant.paired()) {
      for (int64_t s = 0; s < n; ++s) h[s] = r.softmax[i * n + s];
      continue;
    }
    r.weight[i] = variant.pair_weight<double>(lambda, b * T + t, i);
    const double* a0 = r.softmax.data() + variant.signal_map(i) * n;
    const double* a1 = r.softmax.data() + variant.noise_map(i) * n;
    for (int64_t s = 0; s < n; ++s) h[s] = a0[s] - r.weight[i] * a1[s];
  }
  return r;
}

}  // namespace difftx::eval
