#include "kernels/attention/flash_pack.h"
#include "kernels/isa.h"
#include "kernels/simd.h"

#include <algorithm>
#include <cstring>

namespace difftx::kernels::DIFFTX_ISA::flash {
namespace {

// One tile: dst[i][c] = src row c, element i (c < n; zero for n <= c < kTile). Square blocks of
// as many rows and columns as the vector has lanes, transposed in registers, where the width
// allows (at every level: a transpose moves bits and rounds none).
void transpose_tile(const float* src, int64_t src_stride, int64_t n, int64_t width, float* dst) {
  const FloatTag d;
  constexpr int64_t kLanes = hn::MaxLanes(d);
  if (width % kLanes == 0) {
    FloatVec rows[kLanes];
    for (int64_t c0 = 0; c0 < kTile; c0 += kLanes)
      for (int64_t i0 = 0; i0 < width; i0 += kLanes) {
        for (int64_t k = 0; k < kLanes; ++k)
          rows[k] = c0 + k < n ? hn::LoadU(d, src + (c0 + k) * src_stride + i0) : hn::Zero(d);
        transpose_square(d, rows);
        for (int64_t k = 0; k < kLanes; ++k) hn::StoreU(rows[k], d, dst + (i0 + k) * kTile + c0);
      }
    return;
  }
  for (int64_t i = 0; i < width; ++i)
    for (int64_t c = 0; c < kTile; ++c) dst[i * kTile + c] = c < n ? src[c * src_stride + i] : 0.0f;
}

}  // namespace

void pack_queries(const MapLayout& L, const float* q, float factor, float* Qp) {
  const int64_t B = L.dims.B, T = L.dims.T, d = L.dims.d, maps = L.maps;
#pragma omp for schedule(static) nowait
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
#pragma omp for schedule(static) nowait
  for (int64_t item = 0; item < B * heads * tiles; ++item) {
    const int64_t b = item / (heads * tiles), h = item / tiles % heads, tile = item % tiles;
    const int64_t t0 = tile * kTile;
    transpose_tile(x + (b * T + t0) * row + h * width, row, std::min(kTile, T - t0), width, X + item * width * kTile);
  }
}

void pack_row_tiles(const MapLayout& L, const float* x, int64_t heads, int64_t width, float* X) {
  const int64_t B = L.dims.B, T = L.dims.T, row = heads * width, tiles = L.tiles;
#pragma omp for schedule(static) nowait
  for (int64_t item = 0; item < B * heads * tiles; ++item) {
    const int64_t b = item / (heads * tiles), h = item / tiles % heads, tile = item % tiles;
    const int64_t t0 = tile * kTile, n = std::min(kTile, T - t0);
    float* dst = X + item * kTile * width;
    for (int64_t c = 0; c < n; ++c) std::memcpy(dst + c * width, x + (b * T + t0 + c) * row + h * width, sizeof(float) * width);
    std::memset(dst + n * width, 0, sizeof(float) * (kTile - n) * width);
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA::flash
