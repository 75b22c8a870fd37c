#include "kernels/attention/flash_pairs.h"

#include <algorithm>
#include <cmath>

namespace difftx::kernels::flash {

void pair_rows(const MapLayout& L, const float* a, const float* lambda, float* out, int64_t b, int64_t t0,
               int64_t rows, int64_t head0, int64_t heads) {
  const int64_t H = L.dims.H, maps = L.maps, dv = L.dv;
  for (int64_t bt = b * L.dims.T + t0; bt < b * L.dims.T + t0 + rows; ++bt)
    for (int64_t i = head0; i < head0 + heads; ++i) {
      const float w = L.variant.pair_weight<float>(lambda, bt, i);
      const float* a0 = a + (bt * maps + L.variant.signal_map(i)) * dv;
      const float* a1 = a + (bt * maps + L.variant.noise_map(i)) * dv;
      float* y = out + (bt * H + i) * dv;
      for (int64_t x = 0; x < dv; ++x) y[x] = a0[x] - w * a1[x];
    }
}

void output_grads(const MapLayout& L, const float* a, const float* lambda, const float* dout, float* dA,
                  float* D, float* row_dlambda, float* dlambda) {
  const AttentionDims& dims = L.dims;
  const AttentionVariant& v = L.variant;
  const int64_t T = dims.T, H = dims.H, maps = L.maps, dv = L.dv;
#pragma omp for schedule(static) nowait
  for (int64_t bt = 0; bt < dims.B * T; ++bt) {
    const int64_t b = bt / T, t = bt % T;
    auto da = [&](int64_t j) { return dA + ((b * maps + j) * T + t) * dv; };
    auto dot_a = [&](int64_t j, const float* g) {
      const float* aj = a + (bt * maps + j) * dv;
      double dot = 0;
      for (int64_t x = 0; x < dv; ++x) dot += static_cast<double>(g[x]) * aj[x];
      return dot;
    };
    double row_sum = 0;
    for (int64_t i = 0; i < H; ++i) {  // the signal map (or baseline map) of head i: da = dout_i
      const float* g = dout + (bt * H + i) * dv;
      const int64_t s = v.signal_map(i);
      std::copy(g, g + dv, da(s));
      D[(b * maps + s) * T + t] = static_cast<float>(dot_a(s, g));
    }
    // Noise maps: da_n = -sum_i w_i dout_i over the r heads i that share n; dw_i = -<dout_i, a_n>.
    for (int64_t n = 0; v.paired() && n < H / v.r; ++n) {
      const int64_t j = n * (v.r + 1) + v.r;
      float* dst = da(j);
      double Dj = 0;
      for (int64_t i = n * v.r; i < (n + 1) * v.r; ++i) {
        const float* g = dout + (bt * H + i) * dv;
        const float w = v.pair_weight<float>(lambda, bt, i);
        const double dot = dot_a(j, g);
        for (int64_t x = 0; x < dv; ++x) dst[x] = (i == n * v.r ? 0.0f : dst[x]) - w * g[x];
        Dj += -w * dot;
        row_sum -= dot;
        if (v.lambda_source() == LambdaSource::token_logits) dlambda[bt * H + i] = static_cast<float>(-dot * w * (1 - w));
      }
      D[(b * maps + j) * T + t] = static_cast<float>(Dj);
    }
    row_dlambda[bt] = static_cast<float>(row_sum);
  }
}

void finish_dlambda(const MapLayout& L, const float* row_dlambda, float* dlambda) {
  if (L.variant.lambda_source() != LambdaSource::layer_scalar) return;
  double sum = 0;
  for (int64_t bt = 0; bt < L.dims.B * L.dims.T; ++bt) sum += row_dlambda[bt];
  dlambda[0] = static_cast<float>(sum);
}

}  // namespace difftx::kernels::flash
