#include "kernels/attention/flash_pack.h"

#include <algorithm>

namespace difftx::flash {

void pack_queries(const MapLayout& L, const float* q, float factor, float* Qp) {
  const int64_t B = L.dims.B, T = L.dims.T, d = L.dims.d, maps = L.maps;
#pragma omp parallel for schedule(static)
  for (int64_t bt = 0; bt < B * T; ++bt) {
    const int64_t b = bt / T, t = bt % T;
    const float* src = q + bt * maps * d;
    for (int64_t j = 0; j < maps; ++j) {
      float* dst = Qp + ((b * maps + j) * T + t) * d;
      for (int64_t x = 0; x < d; ++x) dst[x] = src[j * d + x] * factor;
    }
  }
}

int64_t transposed_tiles_floats(const MapLayout& L, int64_t heads, int64_t width) {
  return L.dims.B * heads * L.tiles * width * kTile;
}

void pack_transposed_tiles(const MapLayout& L, const float* x, int64_t heads, int64_t width, float* X) {
  const int64_t B = L.dims.B, T = L.dims.T, row = heads * width, tiles = L.tiles;
#pragma omp parallel for schedule(static)
  for (int64_t item = 0; item < B * heads * tiles; ++item) {
    const int64_t b = item / (heads * tiles), h = item / tiles % heads, tile = item % tiles;
    float* dst = X + item * width * kTile;
    const int64_t t0 = tile * kTile, n = std::min(kTile, T - t0);
    for (int64_t c = 0; c < n; ++c) {
      const float* src = x + (b * T + t0 + c) * row + h * width;
      for (int64_t i = 0; i < width; ++i) dst[i * kTile + c] = src[i];
    }
    for (int64_t c = n; c < kTile; ++c)
      for (int64_t i = 0; i < width; ++i) dst[i * kTile + c] = 0.0f;
  }
}

}  // namespace difftx::flash
