#include "kernels/quant/gemm_int8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/isa.h"

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define DIFFTX_GEMM_INT8 1
#define DIFFTX_GEMM_INT8_VNNI 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define DIFFTX_GEMM_INT8 1
#endif

#ifdef DIFFTX_GEMM_INT8
#include <immintrin.h>

#include "core/threading.h"
#include "io/float16.h"
#include "kernels/quant/block_formats.h"
#include "kernels/quant/int8_x.h"
#endif

namespace difftx::DIFFTX_ISA::quant {

#ifdef DIFFTX_GEMM_INT8
namespace {

constexpr int kPanel = 16;  // weight rows per panel: one zmm (two ymm) of int32 lanes
#ifdef DIFFTX_GEMM_INT8_VNNI
// Q8_0 is stored as w + 128 (vpdpbusd's unsigned operand, offset 128)
constexpr bool kSignedQ8_0 = false;
#else
// Q8_0 is stored as w: (w + 128) x, two of them, overflows vpmaddubsw's int16 sums; the kernel
// multiplies |w| by x with w's sign instead
constexpr bool kSignedQ8_0 = true;
#endif

// 16 weight rows repacked: weights [cols / 4][16][4] as unsigned bytes, and per 32-block and
// row the scale d (and, Q4_K, the minimum dmin * m).
struct Panel {
  std::vector<uint8_t> w;
  std::vector<float> scale, minimum;  // [blocks][16]
  int32_t offset;
};

// Weight k of panel row r, as the unsigned byte u, into its place in the panel.
inline void put(Panel& p, int r, int64_t k, uint8_t u) { p.w[(k / 4) * 64 + r * 4 + k % 4] = u; }

void pack_row(const WeightMatrix& W, const uint8_t* row, int r, Panel& p) {
  const int64_t blocks = W.cols / 32;
  if (W.type == WeightType::q4_0) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(row);
    for (int64_t i = 0; i < blocks; ++i) {
      p.scale[i * kPanel + r] = f16_to_float(b[i].d);
      for (int j = 0; j < 16; ++j) {
        put(p, r, 32 * i + j, b[i].qs[j] & 0xF);
        put(p, r, 32 * i + 16 + j, b[i].qs[j] >> 4);
      }
    }
  } else if (W.type == WeightType::q8_0) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row);
    for (int64_t i = 0; i < blocks; ++i) {
      p.scale[i * kPanel + r] = f16_to_float(b[i].d);
      for (int j = 0; j < 32; ++j) put(p, r, 32 * i + j, static_cast<uint8_t>(b[i].qs[j] + (kSignedQ8_0 ? 0 : 128)));
    }
  } else {  // q4_k
    const auto* b = reinterpret_cast<const BlockQ4_K*>(row);
    for (int64_t s = 0; s < W.cols / kQ4_KWeights; ++s) {
      const float d = f16_to_float(b[s].d), dmin = f16_to_float(b[s].dmin);
      for (int j = 0; j < kQ4_KSubBlocks; ++j) {
        const ScaleMin sm = q4_k_scale_min(b[s].scales, j);
        p.scale[(8 * s + j) * kPanel + r] = d * sm.scale;
        p.minimum[(8 * s + j) * kPanel + r] = dmin * sm.min;
        for (int l = 0; l < 32; ++l) {
          const uint8_t byte = b[s].qs[32 * (j / 2) + l];
          put(p, r, kQ4_KWeights * s + 32 * j + l, j % 2 ? byte >> 4 : byte & 0xF);
        }
      }
    }
  }
}

// A panel's arrays for W, allocated before the parallel region (nothing allocates inside it).
Panel empty_panel(const WeightMatrix& W) {
  const int64_t blocks = W.cols / 32;
  return {std::vector<uint8_t>(W.cols * kPanel), std::vector<float>(blocks * kPanel),
          std::vector<float>(W.type == WeightType::q4_k ? blocks * kPanel : 0),
          W.type == WeightType::q4_0 ? 8 : W.type == WeightType::q8_0 && !kSignedQ8_0 ? 128 : 0};
}

void pack_panel(const WeightMatrix& W, int64_t row_bytes, int64_t r0, int rows, Panel& p) {
  std::fill(p.w.begin(), p.w.end(), 0);  // rows past the matrix's last stay zero
  std::fill(p.scale.begin(), p.scale.end(), 0.0f);
  std::fill(p.minimum.begin(), p.minimum.end(), 0.0f);
  for (int r = 0; r < rows; ++r) pack_row(W, static_cast<const uint8_t*>(W.data) + (r0 + r) * row_bytes, r, p);
}

#ifdef DIFFTX_GEMM_INT8_VNNI
constexpr int kTile = 4;  // x rows per micro-kernel call (3 x 4 accumulators and dot products in registers)

// Three panels side by side: 48 weight rows per micro-kernel, so that each broadcast x word
// feeds three dot products (the kernel is bound by loads: one weight vector per panel and one x
// broadcast per row of x for every four columns). Measured against one panel of 16 rows and 8
// x rows (docs/BENCHMARKS.md): 2 x 6 +16%, 3 x 4 +24%, 4 x 3 +15%, 2 x 7 spills registers.
constexpr int kPanels = 3;

// y[n0 + c][r0 + 16 q + lane] for c < T, q < kPanels: 16 lanes = 16 weight rows of panel q
// (rows[q] of them real).
template <int T>
void tile(const Panel* const* p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0, const int* rows,
          float* y, int64_t ld, bool accumulate) {
  __m512 acc[kPanels][T];
  for (auto& panel : acc)
    for (auto& a : panel) a = _mm512_setzero_ps();
  const bool minimums = !p[0]->minimum.empty();
  for (int64_t b = 0; b < qx.blocks; ++b) {
    __m512i dot[kPanels][T];
    for (int c = 0; c < T; ++c) {
      const int32_t bytes = qx.byte_sum[(n0 + c) * qx.blocks + b];
      for (int q = 0; q < kPanels; ++q) dot[q][c] = _mm512_set1_epi32(-p[q]->offset * bytes);
    }
    for (int k = 0; k < 8; ++k) {
      __m512i wk[kPanels];
      for (int q = 0; q < kPanels; ++q) wk[q] = _mm512_loadu_si512(p[q]->w.data() + b * 32 * kPanel + 64 * k);
      for (int c = 0; c < T; ++c) {
        int32_t four;
        std::memcpy(&four, qx.q.data() + (n0 + c) * cols + 32 * b + 4 * k, 4);
        const __m512i xk = _mm512_set1_epi32(four);
        for (int q = 0; q < kPanels; ++q) dot[q][c] = _mm512_dpbusd_epi32(dot[q][c], wk[q], xk);
      }
    }
    for (int q = 0; q < kPanels; ++q) {
      const __m512 dw = _mm512_loadu_ps(p[q]->scale.data() + b * kPanel);
      const __m512 mw = minimums ? _mm512_loadu_ps(p[q]->minimum.data() + b * kPanel) : _mm512_setzero_ps();
      for (int c = 0; c < T; ++c) {
        const int64_t i = (n0 + c) * qx.blocks + b;
        acc[q][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[q][c]), _mm512_mul_ps(dw, _mm512_set1_ps(qx.scale[i])), acc[q][c]);
        if (minimums) acc[q][c] = _mm512_fnmadd_ps(mw, _mm512_set1_ps(qx.sum[i]), acc[q][c]);
      }
    }
  }
  for (int q = 0; q < kPanels; ++q) {
    if (rows[q] == 0) continue;
    const __mmask16 mask = static_cast<__mmask16>((1u << rows[q]) - 1);
    for (int c = 0; c < T; ++c) {
      float* out = y + (n0 + c) * ld + r0 + q * kPanel;
      const __m512 v = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(mask, out), acc[q][c]) : acc[q][c];
      _mm512_mask_storeu_ps(out, mask, v);
    }
  }
}

#else
// AVX2 (no VNNI): vpmaddubsw multiplies 4 unsigned weight bytes of each of 8 rows (one ymm, half
// a panel) by the same 4 broadcast x bytes into int16 pairs. Nibbles (Q4_0, Q4_K) keep adding
// in int16 over a 32-block (8 steps of at most 2 * 15 * 127: 30480, no saturation), then
// vpmaddwd by ones gives the int32 lanes; Q8_0 (|w| times x with w's sign, pairs up to
// 2 * 128 * 127) goes to int32 at every step.
constexpr int kTile = 6;    // x rows per micro-kernel call
constexpr int kPanels = 1;  // 16 weight rows: 2 x 6 dot products and 2 weight vectors in registers

template <int T>
void tile(const Panel* const* p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0, const int* rows,
          float* y, int64_t ld, bool accumulate) {
  constexpr int H = 2 * kPanels;  // ymm halves: half h holds rows 8 (h % 2) .. + 8 of panel h / 2
  __m256 acc[H][T];
  for (auto& half : acc)
    for (auto& a : half) a = _mm256_setzero_ps();
  const bool minimums = !p[0]->minimum.empty(), nibbles = p[0]->offset != 0 || minimums;  // Q4_0, Q4_K
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < qx.blocks; ++b) {
    __m256i dot[H][T];
    for (auto& half : dot)
      for (auto& d : half) d = _mm256_setzero_si256();
    int32_t four[T][8];  // the block's x bytes, 4 per step
    for (int c = 0; c < T; ++c) std::memcpy(four[c], qx.q.data() + (n0 + c) * cols + 32 * b, 32);
    if (nibbles) {
      for (int k = 0; k < 8; ++k) {
        __m256i wk[H];
        for (int h = 0; h < H; ++h) wk[h] = _mm256_loadu_si256((const __m256i*)(p[h / 2]->w.data() + b * 32 * kPanel + 64 * k + 32 * (h % 2)));
        for (int c = 0; c < T; ++c) {
          const __m256i xk = _mm256_set1_epi32(four[c][k]);
          for (int h = 0; h < H; ++h) dot[h][c] = _mm256_add_epi16(dot[h][c], _mm256_maddubs_epi16(wk[h], xk));
        }
      }
      for (auto& half : dot)
        for (auto& d : half) d = _mm256_madd_epi16(d, ones);
    } else {
      for (int k = 0; k < 8; ++k) {
        __m256i wk[H], magnitude[H];
        for (int h = 0; h < H; ++h) {
          wk[h] = _mm256_loadu_si256((const __m256i*)(p[h / 2]->w.data() + b * 32 * kPanel + 64 * k + 32 * (h % 2)));
          magnitude[h] = _mm256_abs_epi8(wk[h]);
        }
        for (int c = 0; c < T; ++c) {
          const __m256i xk = _mm256_set1_epi32(four[c][k]);
          for (int h = 0; h < H; ++h)
            dot[h][c] = _mm256_add_epi32(dot[h][c], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude[h], _mm256_sign_epi8(xk, wk[h])), ones));
        }
      }
    }
    for (int h = 0; h < H; ++h) {
      const float* scale = p[h / 2]->scale.data() + b * kPanel + 8 * (h % 2);
      const __m256 dw = _mm256_loadu_ps(scale);
      const __m256 mw = minimums ? _mm256_loadu_ps(p[h / 2]->minimum.data() + b * kPanel + 8 * (h % 2)) : _mm256_setzero_ps();
      for (int c = 0; c < T; ++c) {
        const int64_t i = (n0 + c) * qx.blocks + b;
        const __m256i start = _mm256_set1_epi32(-p[h / 2]->offset * qx.byte_sum[i]);
        const __m256 d = _mm256_cvtepi32_ps(_mm256_add_epi32(dot[h][c], start));
        acc[h][c] = _mm256_fmadd_ps(d, _mm256_mul_ps(dw, _mm256_set1_ps(qx.scale[i])), acc[h][c]);
        if (minimums) acc[h][c] = _mm256_fnmadd_ps(mw, _mm256_set1_ps(qx.sum[i]), acc[h][c]);
      }
    }
  }
  const __m256i lane = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  for (int h = 0; h < H; ++h) {
    const int real = std::clamp(rows[h / 2] - 8 * (h % 2), 0, 8);  // rows of this half inside the matrix
    if (real == 0) continue;
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(real), lane);
    for (int c = 0; c < T; ++c) {
      float* out = y + (n0 + c) * ld + r0 + 16 * (h / 2) + 8 * (h % 2);
      const __m256 v = accumulate ? _mm256_add_ps(_mm256_maskload_ps(out, mask), acc[h][c]) : acc[h][c];
      _mm256_maskstore_ps(out, mask, v);
    }
  }
}
#endif

template <int T>
void tail_tile(int t, const Panel* const* p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0,
               const int* rows, float* y, int64_t ld, bool accumulate) {
  if constexpr (T > 0) {
    if (t == T) return tile<T>(p, qx, cols, n0, r0, rows, y, ld, accumulate);
    tail_tile<T - 1>(t, p, qx, cols, n0, r0, rows, y, ld, accumulate);
  }
}

}  // namespace

bool gemm_int8_available(WeightType type) {
  return type == WeightType::q4_0 || type == WeightType::q8_0 || type == WeightType::q4_k;
}

void gemm_int8(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  const QuantizedX qx = quantize_x(x, N, W.cols);
  const int64_t span = kPanels * kPanel, spans = (W.rows + span - 1) / span;
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);  // its checks, before the region
  const int threads = thread_count();
  std::vector<Panel> own(threads * kPanels, empty_panel(W));  // kPanels per thread
#pragma omp parallel num_threads(threads)
  {
    const Panel* p[kPanels];
    for (int q = 0; q < kPanels; ++q) p[q] = &own[thread_index() * kPanels + q];
#pragma omp for schedule(static)
    for (int64_t i = 0; i < spans; ++i) {
      const int64_t r0 = i * span;
      int rows[kPanels];
      for (int q = 0; q < kPanels; ++q) {
        rows[q] = static_cast<int>(std::clamp<int64_t>(W.rows - r0 - q * kPanel, 0, kPanel));
        pack_panel(W, row_bytes, r0 + q * kPanel, rows[q], own[thread_index() * kPanels + q]);
      }
      int64_t n0 = 0;
      for (; n0 + kTile <= N; n0 += kTile) tile<kTile>(p, qx, W.cols, n0, r0, rows, y, W.rows, accumulate);
      if (n0 < N) tail_tile<kTile - 1>(static_cast<int>(N - n0), p, qx, W.cols, n0, r0, rows, y, W.rows, accumulate);
    }
  }
}
#elif !defined(__ARM_FEATURE_DOTPROD)  // ARM with dotprod: gemm_int8_neon.cpp
bool gemm_int8_available(WeightType) { return false; }
void gemm_int8(const WeightMatrix&, const float*, float*, int64_t, bool) {}
#endif

}  // namespace difftx::DIFFTX_ISA::quant
