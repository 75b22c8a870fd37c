#include "kernels/attention/flash_pairs.h"

#include <cmath>

namespace difftx::flash {

void pair_rows(const MapLayout& L, const float* a, const float* lambda, float* out, int64_t b, int64_t t0,
               int64_t rows, int64_t head0, int64_t heads) {
  const int64_t H = L.dims.H, dv = L.dv;
  for (int64_t bt = b * L.dims.T + t0; bt < b * L.dims.T + t0 + rows; ++bt)
    for (int64_t i = head0; i < head0 + heads; ++i) {
      const float w = L.variant.pair_weight<float>(lambda, bt, i);
      const float* a0 = a + (bt * 2 * H + 2 * i) * dv;
      const float* a1 = a0 + dv;
      float* y = out + (bt * H + i) * dv;
      for (int64_t x = 0; x < dv; ++x) y[x] = a0[x] - w * a1[x];
    }
}

void output_grads(const MapLayout& L, const float* a, const float* lambda, const float* dout, float* dA,
                  float* D, float* row_dlambda, float* dlambda) {
  const AttentionDims& dims = L.dims;
  const int64_t T = dims.T, H = dims.H, maps = L.maps, dv = L.dv;
#pragma omp for schedule(static) nowait
  for (int64_t bt = 0; bt < dims.B * T; ++bt) {
    const int64_t b = bt / T, t = bt % T;
    double row_sum = 0;
    for (int64_t j = 0; j < maps; ++j) {
      const int64_t i = L.variant.output_head(j);
      const bool subtracted = L.variant.subtracted(j);
      const float w = subtracted ? L.variant.pair_weight<float>(lambda, bt, i) : 0.0f;
      const float coef = subtracted ? -w : 1.0f;
      const float* g = dout + (bt * H + i) * dv;
      const float* aj = a + (bt * maps + j) * dv;
      float* dst = dA + ((b * maps + j) * T + t) * dv;
      double dot = 0;
      for (int64_t x = 0; x < dv; ++x) {
        dot += static_cast<double>(g[x]) * aj[x];
        dst[x] = coef * g[x];
      }
      D[(b * maps + j) * T + t] = static_cast<float>(coef * dot);
      if (subtracted) row_sum -= dot;  // dw = -<dout_i, a_{2i+1}>
      if (subtracted && L.variant.lambda_source() == LambdaSource::token_logits) dlambda[bt * H + i] = static_cast<float>(-dot * w * (1 - w));
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

}  // namespace difftx::flash
