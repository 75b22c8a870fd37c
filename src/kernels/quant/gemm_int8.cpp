#include "kernels/quant/gemm_int8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/isa.h"
#include "kernels/quant/type_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define DIFFTX_GEMM_INT8 1
#define DIFFTX_GEMM_INT8_VNNI 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define DIFFTX_GEMM_INT8 1
#define DIFFTX_GEMM_INT8_AVX2 1
#endif

#ifdef DIFFTX_GEMM_INT8
#include <immintrin.h>

#include "core/threading.h"
#include "kernels/quant/int8_x.h"
#include "kernels/quant/weight_panels.h"
#endif
#ifdef DIFFTX_GEMM_INT8_AVX2
#include "kernels/quant/simd_avx2.h"
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {

#ifdef DIFFTX_GEMM_INT8
namespace {

using ::difftx::kernels::quant::kPanelHeight;
using ::difftx::kernels::quant::pack_panels;
using ::difftx::kernels::quant::panel_bytes;
using ::difftx::kernels::quant::panel_count;
using ::difftx::kernels::quant::panel_record_bytes;
using ::difftx::kernels::quant::panel_weight_bytes;

constexpr int kPanel = kPanelHeight;  // weight rows per panel: one zmm (two ymm) of int32 lanes

// A panel's records (weight_panels.h) for every block of the matrix's columns.
using PanelRecords = const uint8_t*;

// Per 32-block a lane starts from -offset * (sum of the x block's bytes): 8 for Q4_0's q - 8;
// Q8_0: 128 where VNNI multiplies w + 128 as its unsigned operand, 0 where AVX2 takes |w| and
// gives x w's sign; Q4_K: 0 (its minimums come off separately).
#ifdef DIFFTX_GEMM_INT8_VNNI
constexpr int32_t kQ8_0Offset = 128;
#else
constexpr int32_t kQ8_0Offset = 0;
#endif
constexpr int32_t lane_offset(WeightType type) { return type == WeightType::q4_0 ? 8 : type == WeightType::q8_0 ? kQ8_0Offset : 0; }

#ifdef DIFFTX_GEMM_INT8_VNNI
constexpr int kTile = 4;  // x rows per micro-kernel call (3 x 4 accumulators and dot products in registers)

// Three panels side by side: 48 weight rows per micro-kernel, so that each broadcast x word
// feeds three dot products (the kernel is bound by loads: one weight vector per panel and one x
// broadcast per row of x for every four columns). Measured against one panel of 16 rows and 8
// x rows (docs/BENCHMARKS.md): 2 x 6 +16%, 3 x 4 +24%, 4 x 3 +15%, 2 x 7 spills registers.
constexpr int kPanels = 3;

// y[n0 + c][r0 + 16 q + lane] for c < T, q < kPanels: 16 lanes = 16 weight rows of panel q
// (rows[q] of them real).
template <WeightType kType, int T>
void tile(const PanelRecords* p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0, const int* rows,
          float* y, int64_t ld, bool accumulate) {
  constexpr int64_t record = panel_record_bytes(kType), scales = panel_weight_bytes(kType);
  constexpr bool nibbles = kType != WeightType::q8_0, minimums = kType == WeightType::q4_k;
  const __m512i low = _mm512_set1_epi8(0xF), bias = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc[kPanels][T];
  for (auto& panel : acc)
    for (auto& a : panel) a = _mm512_setzero_ps();
  for (int64_t b = 0; b < qx.blocks; ++b) {
    __m512i dot[kPanels][T];
    for (int c = 0; c < T; ++c) {
      const int32_t bytes = qx.byte_sum[(n0 + c) * qx.blocks + b];
      for (int q = 0; q < kPanels; ++q) dot[q][c] = _mm512_set1_epi32(-lane_offset(kType) * bytes);
    }
    // k-step k: 4 weights of each row (one vector per panel) times x bytes 4k .. 4k + 3
    auto step = [&](int k, const __m512i (&wk)[kPanels]) {
      for (int c = 0; c < T; ++c) {
        int32_t four;
        std::memcpy(&four, qx.q.data() + (n0 + c) * cols + 32 * b + 4 * k, 4);
        const __m512i xk = _mm512_set1_epi32(four);
        for (int q = 0; q < kPanels; ++q) dot[q][c] = _mm512_dpbusd_epi32(dot[q][c], wk[q], xk);
      }
    };
    if constexpr (nibbles) {
      for (int v = 0; v < 4; ++v) {
        __m512i raw[kPanels], lo[kPanels], hi[kPanels];
        for (int q = 0; q < kPanels; ++q) {
          raw[q] = _mm512_loadu_si512(p[q] + b * record + 64 * v);
          lo[q] = _mm512_and_si512(raw[q], low);
          hi[q] = _mm512_and_si512(_mm512_srli_epi16(raw[q], 4), low);
        }
        step(v, lo);
        step(v + 4, hi);
      }
    } else {
      for (int k = 0; k < 8; ++k) {
        __m512i wk[kPanels];  // w + 128
        for (int q = 0; q < kPanels; ++q) wk[q] = _mm512_xor_si512(_mm512_loadu_si512(p[q] + b * record + 64 * k), bias);
        step(k, wk);
      }
    }
    for (int q = 0; q < kPanels; ++q) {
      const uint8_t* s = p[q] + b * record + scales;
      const __m512 dw = minimums ? _mm512_loadu_ps(s) : _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)s));
      const __m512 mw = minimums ? _mm512_loadu_ps(s + 4 * kPanel) : _mm512_setzero_ps();
      for (int c = 0; c < T; ++c) {
        const int64_t i = (n0 + c) * qx.blocks + b;
        acc[q][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[q][c]), _mm512_mul_ps(dw, _mm512_set1_ps(qx.scale[i])), acc[q][c]);
        if constexpr (minimums) acc[q][c] = _mm512_fnmadd_ps(mw, _mm512_set1_ps(qx.sum[i]), acc[q][c]);
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
// AVX2 (no AVX-512 VNNI): simd_avx2.h's dot4 multiplies 4 unsigned weight bytes of each of 8
// rows (one ymm, half a panel) by the same 4 broadcast x bytes (vpmaddubsw, or vpdpbusd at the
// avxvnni level). Nibbles (Q4_0, Q4_K) make one dot4_partial run over a 32-block (8 steps of at
// most 2 * 15 * 127: 30480, inside int16); Q8_0 (|w| times x with w's sign, pairs up to
// 2 * 128 * 127) goes to int32 lanes at every step.
constexpr int kTile = 6;    // x rows per micro-kernel call
constexpr int kPanels = 1;  // 16 weight rows: 2 x 6 dot products and 2 weight vectors in registers

template <WeightType kType, int T>
void tile(const PanelRecords* p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0, const int* rows,
          float* y, int64_t ld, bool accumulate) {
  constexpr int H = 2 * kPanels;  // ymm halves: half h holds rows 8 (h % 2) .. + 8 of panel h / 2
  constexpr int64_t record = panel_record_bytes(kType), scales = panel_weight_bytes(kType);
  constexpr bool nibbles = kType != WeightType::q8_0, minimums = kType == WeightType::q4_k;
  __m256 acc[H][T];
  for (auto& half : acc)
    for (auto& a : half) a = _mm256_setzero_ps();
  const __m256i low = _mm256_set1_epi8(0xF);
  for (int64_t b = 0; b < qx.blocks; ++b) {
    __m256i dot[H][T];
    for (auto& half : dot)
      for (auto& d : half) d = _mm256_setzero_si256();
    int32_t four[T][8];  // the block's x bytes, 4 per step
    for (int c = 0; c < T; ++c) std::memcpy(four[c], qx.q.data() + (n0 + c) * cols + 32 * b, 32);
    auto weights = [&](int h, int64_t at) { return _mm256_loadu_si256((const __m256i*)(p[h / 2] + b * record + at + 32 * (h % 2))); };
    if constexpr (nibbles) {
      // k-step k: 4 weights times x bytes 4k .. 4k + 3, k = v (low nibbles), v + 4 (high)
      auto step = [&](int k, const __m256i (&wk)[H]) {
        for (int c = 0; c < T; ++c) {
          const __m256i xk = _mm256_set1_epi32(four[c][k]);
          for (int h = 0; h < H; ++h) dot[h][c] = dot4_partial(dot[h][c], wk[h], xk);
        }
      };
      for (int v = 0; v < 4; ++v) {
        __m256i lo[H], hi[H];
        for (int h = 0; h < H; ++h) {
          const __m256i raw = weights(h, 64 * v);
          lo[h] = _mm256_and_si256(raw, low);
          hi[h] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low);
        }
        step(v, lo);
        step(v + 4, hi);
      }
      for (auto& half : dot)
        for (auto& d : half) d = dot4_lanes(d);
    } else {
      for (int k = 0; k < 8; ++k) {
        __m256i wk[H], magnitude[H];
        for (int h = 0; h < H; ++h) {
          wk[h] = weights(h, 64 * k);
          magnitude[h] = _mm256_abs_epi8(wk[h]);
        }
        for (int c = 0; c < T; ++c) {
          const __m256i xk = _mm256_set1_epi32(four[c][k]);
          for (int h = 0; h < H; ++h)
            dot[h][c] = dot4_add(dot[h][c], magnitude[h], _mm256_sign_epi8(xk, wk[h]));
        }
      }
    }
    for (int h = 0; h < H; ++h) {
      const uint8_t* s = p[h / 2] + b * record + scales;
      const __m256 dw = minimums ? _mm256_loadu_ps((const float*)s + 8 * (h % 2))
                                 : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(s + 16 * (h % 2))));
      const __m256 mw = minimums ? _mm256_loadu_ps((const float*)s + kPanel + 8 * (h % 2)) : _mm256_setzero_ps();
      for (int c = 0; c < T; ++c) {
        const int64_t i = (n0 + c) * qx.blocks + b;
        const __m256i start = _mm256_set1_epi32(-lane_offset(kType) * qx.byte_sum[i]);
        const __m256 d = _mm256_cvtepi32_ps(_mm256_add_epi32(dot[h][c], start));
        acc[h][c] = _mm256_fmadd_ps(d, _mm256_mul_ps(dw, _mm256_set1_ps(qx.scale[i])), acc[h][c]);
        if constexpr (minimums) acc[h][c] = _mm256_fnmadd_ps(mw, _mm256_set1_ps(qx.sum[i]), acc[h][c]);
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

template <WeightType kType, int T>
void tail_tile(int t, const PanelRecords* p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0,
               const int* rows, float* y, int64_t ld, bool accumulate) {
  if constexpr (T > 0) {
    if (t == T) return tile<kType, T>(p, qx, cols, n0, r0, rows, y, ld, accumulate);
    tail_tile<kType, T - 1>(t, p, qx, cols, n0, r0, rows, y, ld, accumulate);
  }
}

// Spans of kPanels panels over the threads, each against every row of x. A matrix without panels
// has each span's packed into the thread's own scratch first.
template <WeightType kType>
void gemm_spans(const WeightMatrix& W, const QuantizedX& qx, float* y, int64_t N, bool accumulate) {
  const int64_t bytes = panel_bytes(W.type, W.cols);  // one panel's
  const int64_t panels = panel_count(W.rows), spans = (panels + kPanels - 1) / kPanels;
  const int threads = thread_count();
  std::vector<uint8_t> own(W.panels ? 0 : threads * kPanels * bytes);  // allocated outside the region
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (int64_t i = 0; i < spans; ++i) {
      const int64_t first = i * kPanels, count = std::min<int64_t>(kPanels, panels - first);
      const uint8_t* records = static_cast<const uint8_t*>(W.panels) + first * bytes;
      if (!W.panels) {
        uint8_t* scratch = own.data() + thread_index() * kPanels * bytes;
        pack_panels(W, first, count, scratch);
        records = scratch;
      }
      PanelRecords p[kPanels];
      int rows[kPanels];
      for (int q = 0; q < kPanels; ++q) {
        p[q] = records + std::min<int64_t>(q, count - 1) * bytes;  // past the last panel: computed, not stored
        rows[q] = static_cast<int>(std::clamp<int64_t>(W.rows - (first + q) * kPanel, 0, kPanel));
      }
      const int64_t r0 = first * kPanel;
      int64_t n0 = 0;
      for (; n0 + kTile <= N; n0 += kTile) tile<kType, kTile>(p, qx, W.cols, n0, r0, rows, y, W.rows, accumulate);
      if (n0 < N) tail_tile<kType, kTile - 1>(static_cast<int>(N - n0), p, qx, W.cols, n0, r0, rows, y, W.rows, accumulate);
    }
  }
}

// x quantized once, then the spans (W.type is kType).
template <WeightType kType>
void gemm_quantized_x(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  weight_row_bytes(W.type, W.cols);  // its checks, before the region
  gemm_spans<kType>(W, quantize_x(x, N, W.cols), y, N, accumulate);
}

}  // namespace

void register_gemm_int8(TypeKernelTable& table) {
  table[WeightType::q4_0].gemm_int8 = gemm_quantized_x<WeightType::q4_0>;
  table[WeightType::q8_0].gemm_int8 = gemm_quantized_x<WeightType::q8_0>;
  table[WeightType::q4_k].gemm_int8 = gemm_quantized_x<WeightType::q4_k>;
  for (TypeKernels& kernels : table.entries) kernels.gemm_int8_reads_panels = kernels.gemm_int8 != nullptr;  // all
}
#elif !defined(__ARM_FEATURE_DOTPROD)  // ARM with dotprod: gemm_int8_neon.cpp
void register_gemm_int8(TypeKernelTable&) {}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA::quant
