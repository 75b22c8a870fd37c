#include "kernels/attention/flash_pack.h"
#include "kernels/isa.h"
#include "kernels/transpose_neon.h"

#include <algorithm>
#include <cstring>

#ifdef __AVX512F__
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC PR 105593, see flash_tile.cpp
#include <immintrin.h>
#elif defined(__AVX2__)
#include <immintrin.h>
#endif

namespace difftx::DIFFTX_ISA::flash {
namespace {

#ifdef __AVX512F__
// Transposes a 16 x 16 block in registers: rows[k][n] -> column n written to out + n * out_stride.
// Three shuffle stages: pairs of rows (unpack), quads within 128-bit lanes (shuffle_ps), then
// the 4 x 4 grid of 128-bit lanes (shuffle_f32x4).
inline void transpose16(const __m512 (&rows)[16], float* out, int64_t out_stride) {
  __m512 t[16], u[16];
  for (int m = 0; m < 8; ++m) {
    t[2 * m] = _mm512_unpacklo_ps(rows[2 * m], rows[2 * m + 1]);
    t[2 * m + 1] = _mm512_unpackhi_ps(rows[2 * m], rows[2 * m + 1]);
  }
  for (int p = 0; p < 4; ++p) {  // u[4p + q], lane l: column 4l + q of rows 4p .. 4p+3
    u[4 * p + 0] = _mm512_shuffle_ps(t[4 * p], t[4 * p + 2], 0x44);
    u[4 * p + 1] = _mm512_shuffle_ps(t[4 * p], t[4 * p + 2], 0xEE);
    u[4 * p + 2] = _mm512_shuffle_ps(t[4 * p + 1], t[4 * p + 3], 0x44);
    u[4 * p + 3] = _mm512_shuffle_ps(t[4 * p + 1], t[4 * p + 3], 0xEE);
  }
  for (int q = 0; q < 4; ++q) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x44), v1 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x44);
    const __m512 v2 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xEE), v3 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xEE);
    _mm512_storeu_ps(out + (0 + q) * out_stride, _mm512_shuffle_f32x4(v0, v1, 0x88));
    _mm512_storeu_ps(out + (4 + q) * out_stride, _mm512_shuffle_f32x4(v0, v1, 0xDD));
    _mm512_storeu_ps(out + (8 + q) * out_stride, _mm512_shuffle_f32x4(v2, v3, 0x88));
    _mm512_storeu_ps(out + (12 + q) * out_stride, _mm512_shuffle_f32x4(v2, v3, 0xDD));
  }
}
#elif defined(__AVX2__)
// Transposes an 8 x 8 block in registers: rows[k][n] -> column n written to out + n * out_stride.
// Pairs of rows (unpack), quads within 128-bit lanes (shuffle_ps), then the two 128-bit lanes
// (permute2f128).
inline void transpose8(const __m256 (&rows)[8], float* out, int64_t out_stride) {
  __m256 t[8], u[8];
  for (int m = 0; m < 4; ++m) {
    t[2 * m] = _mm256_unpacklo_ps(rows[2 * m], rows[2 * m + 1]);
    t[2 * m + 1] = _mm256_unpackhi_ps(rows[2 * m], rows[2 * m + 1]);
  }
  for (int p = 0; p < 2; ++p) {  // u[4p + q], lane l: column 4l + q of rows 4p .. 4p+3
    u[4 * p + 0] = _mm256_shuffle_ps(t[4 * p], t[4 * p + 2], 0x44);
    u[4 * p + 1] = _mm256_shuffle_ps(t[4 * p], t[4 * p + 2], 0xEE);
    u[4 * p + 2] = _mm256_shuffle_ps(t[4 * p + 1], t[4 * p + 3], 0x44);
    u[4 * p + 3] = _mm256_shuffle_ps(t[4 * p + 1], t[4 * p + 3], 0xEE);
  }
  for (int q = 0; q < 4; ++q) {
    _mm256_storeu_ps(out + q * out_stride, _mm256_permute2f128_ps(u[q], u[4 + q], 0x20));
    _mm256_storeu_ps(out + (4 + q) * out_stride, _mm256_permute2f128_ps(u[q], u[4 + q], 0x31));
  }
}
#endif

// One tile: dst[i][c] = src row c, element i (c < n; zero for n <= c < kTile).
void transpose_tile(const float* src, int64_t src_stride, int64_t n, int64_t width, float* dst) {
#ifdef __AVX512F__
  if (width % 16 == 0) {
    for (int64_t c0 = 0; c0 < kTile; c0 += 16)
      for (int64_t i0 = 0; i0 < width; i0 += 16) {
        __m512 rows[16];
        for (int k = 0; k < 16; ++k)
          rows[k] = c0 + k < n ? _mm512_loadu_ps(src + (c0 + k) * src_stride + i0) : _mm512_setzero_ps();
        transpose16(rows, dst + i0 * kTile + c0, kTile);
      }
    return;
  }
#elif defined(__AVX2__)
  if (width % 8 == 0) {
    for (int64_t c0 = 0; c0 < kTile; c0 += 8)
      for (int64_t i0 = 0; i0 < width; i0 += 8) {
        __m256 rows[8];
        for (int k = 0; k < 8; ++k)
          rows[k] = c0 + k < n ? _mm256_loadu_ps(src + (c0 + k) * src_stride + i0) : _mm256_setzero_ps();
        transpose8(rows, dst + i0 * kTile + c0, kTile);
      }
    return;
  }
#elif defined(__ARM_NEON)
  if (width % 4 == 0) {
    for (int64_t c0 = 0; c0 < kTile; c0 += 4)
      for (int64_t i0 = 0; i0 < width; i0 += 4) {
        float32x4_t rows[4];
        for (int k = 0; k < 4; ++k)
          rows[k] = c0 + k < n ? vld1q_f32(src + (c0 + k) * src_stride + i0) : vdupq_n_f32(0.0f);
        transpose4(rows);
        for (int k = 0; k < 4; ++k) vst1q_f32(dst + (i0 + k) * kTile + c0, rows[k]);
      }
    return;
  }
#endif
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

}  // namespace difftx::DIFFTX_ISA::flash
