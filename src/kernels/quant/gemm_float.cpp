#include "kernels/quant/gemm_float.h"

#include <algorithm>

#include "kernels/isa.h"

#if defined(__AVX512F__)
#define DIFFTX_GEMM_FLOAT 1
#define DIFFTX_GEMM_FLOAT_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define DIFFTX_GEMM_FLOAT 1
#define DIFFTX_GEMM_FLOAT_AVX2 1
#elif defined(__ARM_NEON)
#define DIFFTX_GEMM_FLOAT 1
#endif

#ifdef DIFFTX_GEMM_FLOAT
#if defined(__ARM_NEON)
#include <arm_neon.h>

#include "kernels/transpose_neon.h"
#else
#include <immintrin.h>
#endif

#include <cstring>

#include "core/buffer.h"
#include "core/threading.h"
#include "kernels/op_threading.h"
#include "kernels/quant/weight_panels.h"
#endif

namespace difftx::DIFFTX_ISA::quant {

#ifdef DIFFTX_GEMM_FLOAT
namespace {

using ::difftx::quant::kPanelHeight;
using ::difftx::quant::panel_bytes;

#ifdef DIFFTX_GEMM_FLOAT_AVX512
constexpr int kPanel = 16;   // weight rows per panel: one zmm of outputs
constexpr int kPanels = 3;   // panels per micro-kernel call: each broadcast x feeds 3 FMAs
constexpr int kTile = 8;     // x rows per micro-kernel call: 3 x 8 accumulators in registers

// 16 weights of one row from column k on, widened to F32 (the last up to 15 through a mask).
template <WeightType kType>
inline __m512 load16(const uint8_t* row, int64_t k, __mmask16 mask) {
  if constexpr (kType == WeightType::f32) return _mm512_maskz_loadu_ps(mask, row + 4 * k);
  const __m256i h = _mm256_maskz_loadu_epi16(mask, row + 2 * k);
  if constexpr (kType == WeightType::bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);  // f16
}

// v[i][j] becomes v[j][i]: 16 x 16 floats, in four rounds of shuffles.
inline void transpose16(__m512 (&v)[16]) {
  __m512 a[16], b[16];
  for (int i = 0; i < 16; i += 2) {  // pairs of rows: (v_i[0], v_i+1[0], v_i[1], v_i+1[1]) per 128-bit lane
    a[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
    a[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {  // b[g + j], lane l: rows g .. g + 3 at column 4l + j
    const __m512d a0 = _mm512_castps_pd(a[g]), a1 = _mm512_castps_pd(a[g + 1]);
    const __m512d a2 = _mm512_castps_pd(a[g + 2]), a3 = _mm512_castps_pd(a[g + 3]);
    b[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    b[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    b[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    b[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
  for (int j = 0; j < 4; ++j) {  // column 4l + j gathers lane l of b[j], b[4 + j], b[8 + j], b[12 + j]
    const __m512 lo02 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x88), lo13 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xDD);
    const __m512 hi02 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x88), hi13 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xDD);
    v[j] = _mm512_shuffle_f32x4(lo02, hi02, 0x88);
    v[8 + j] = _mm512_shuffle_f32x4(lo02, hi02, 0xDD);
    v[4 + j] = _mm512_shuffle_f32x4(lo13, hi13, 0x88);
    v[12 + j] = _mm512_shuffle_f32x4(lo13, hi13, 0xDD);
  }
}

// panel[k * 16 + i] = W[first + i][k] for i < rows, zero for rows <= i < 16.
template <WeightType kType>
void pack_panel(const uint8_t* first, int64_t row_bytes, int rows, int64_t cols, float* panel) {
  __m512 v[16];
  for (int64_t k = 0; k < cols; k += 16) {
    const int width = static_cast<int>(std::min<int64_t>(16, cols - k));
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1);
    for (int i = 0; i < 16; ++i) v[i] = i < rows ? load16<kType>(first + i * row_bytes, k, mask) : _mm512_setzero_ps();
    transpose16(v);
    for (int j = 0; j < width; ++j) _mm512_store_ps(panel + (k + j) * kPanel, v[j]);
  }
}

// 16 weights of column k of a panel (16 rows), widened to F32: F32 panels packed per call, or
// prebuilt BF16 / F16 ones (weight_panels.h), from `at` on.
template <WeightType kType>
inline __m512 column16(const uint8_t* at) {
  if constexpr (kType == WeightType::f32) return _mm512_loadu_ps(at);
  const __m256i h = _mm256_loadu_si256((const __m256i*)at);
  if constexpr (kType == WeightType::bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);  // f16
}

// y[n0 + c][r0 + 16 q + lane] for c < T, q < P: panel q (rows[q] real rows; column k at
// panel[q] + k * stride) against x row n0 + c, acc = fma(x[k], w[k], acc) for k = 0 .. cols - 1.
template <WeightType kType, int P, int T>
void tile(const uint8_t* const* panel, int64_t stride, const float* x, int64_t cols, int64_t n0, int64_t r0,
          const int* rows, float* y, int64_t ld, bool accumulate) {
  __m512 acc[P][T];
  for (auto& p : acc)
    for (auto& a : p) a = _mm512_setzero_ps();
  const float* xc = x + n0 * cols;
  for (int64_t k = 0; k < cols; ++k) {
    __m512 w[P];
    for (int q = 0; q < P; ++q) w[q] = column16<kType>(panel[q] + k * stride);
    for (int c = 0; c < T; ++c) {
      const __m512 xk = _mm512_set1_ps(xc[c * cols + k]);
      for (int q = 0; q < P; ++q) acc[q][c] = _mm512_fmadd_ps(xk, w[q], acc[q][c]);
    }
  }
  for (int q = 0; q < P; ++q) {
    const __mmask16 mask = static_cast<__mmask16>((1u << rows[q]) - 1);
    for (int c = 0; c < T; ++c) {
      float* out = y + (n0 + c) * ld + r0 + q * kPanel;
      const __m512 v = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(mask, out), acc[q][c]) : acc[q][c];
      _mm512_mask_storeu_ps(out, mask, v);
    }
  }
}

#elif defined(DIFFTX_GEMM_FLOAT_AVX2)
// AVX2: panels of 8 rows (one ymm of outputs), 4 panels against up to 3 rows of x (12
// accumulators, 3 broadcast x and a weight vector in the 16 registers); the same chain per
// output as the AVX-512 kernel. 4 panels keep 4 FMA chains in flight for a decode row, where 2
// left the FMA latency exposed (F16 decode 0.95x llama.cpp's AVX2 library, docs/BENCHMARKS.md).
constexpr int kPanel = 8;   // weight rows per panel: one ymm of outputs
constexpr int kPanels = 4;  // panels per micro-kernel call: each broadcast x feeds 4 FMAs
constexpr int kTile = 3;    // x rows per micro-kernel call: 4 x 3 accumulators in registers

// 8 weights of one row from column k on, widened to F32.
template <WeightType kType>
inline __m256 load8(const uint8_t* row, int64_t k) {
  if constexpr (kType == WeightType::f32) return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + k);
  const __m128i h = _mm_loadu_si128((const __m128i*)(row + 2 * k));
  if constexpr (kType == WeightType::bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  return _mm256_cvtph_ps(h);  // f16
}

// v[i][j] becomes v[j][i]: 8 x 8 floats, in three rounds of shuffles.
inline void transpose8(__m256 (&v)[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 8; i += 2) {  // per 128-bit lane: (v_i[c], v_i+1[c], v_i[c + 1], v_i+1[c + 1])
    t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
  }
  for (int g = 0; g < 8; g += 4) {  // s[g + c]: rows g .. g + 3 at column c (low lane), c + 4 (high lane)
    s[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
    s[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
    s[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    s[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    v[c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x20);
    v[4 + c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x31);
  }
}

// panel[k * 8 + i] = W[first + i][k] for i < rows, zero for rows <= i < 8.
template <WeightType kType>
void pack_panel(const uint8_t* first, int64_t row_bytes, int rows, int64_t cols, float* panel) {
  constexpr int64_t kBytes = kType == WeightType::f32 ? 4 : 2;  // per weight
  __m256 v[8];
  for (int64_t k = 0; k < cols; k += 8) {
    const int width = static_cast<int>(std::min<int64_t>(8, cols - k));
    for (int i = 0; i < 8; ++i) {
      if (i >= rows) {
        v[i] = _mm256_setzero_ps();
      } else if (width == 8) {
        v[i] = load8<kType>(first + i * row_bytes, k);
      } else {  // the last up to 7 columns, through a zeroed copy
        alignas(32) uint8_t part[32] = {};
        std::memcpy(part, first + i * row_bytes + kBytes * k, width * kBytes);
        v[i] = load8<kType>(part, 0);
      }
    }
    transpose8(v);
    for (int j = 0; j < width; ++j) _mm256_store_ps(panel + (k + j) * kPanel, v[j]);
  }
}

// 8 weights of column k of a panel (8 rows), widened to F32: F32 panels packed per call, or
// half of a prebuilt BF16 / F16 one (weight_panels.h), from `at` on.
template <WeightType kType>
inline __m256 column8(const uint8_t* at) {
  if constexpr (kType == WeightType::f32) return _mm256_loadu_ps(reinterpret_cast<const float*>(at));
  const __m128i h = _mm_loadu_si128((const __m128i*)at);
  if constexpr (kType == WeightType::bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  return _mm256_cvtph_ps(h);  // f16
}

// y[n0 + c][r0 + 8 q + lane] for c < T, q < P: panel q (rows[q] real rows; column k at panel[q]
// + k * stride) against x row n0 + c, acc = fma(x[k], w[k], acc) for k = 0 .. cols - 1.
template <WeightType kType, int P, int T>
void tile(const uint8_t* const* panel, int64_t stride, const float* x, int64_t cols, int64_t n0, int64_t r0,
          const int* rows, float* y, int64_t ld, bool accumulate) {
  __m256 acc[P][T];
  for (auto& p : acc)
    for (auto& a : p) a = _mm256_setzero_ps();
  const float* xc = x + n0 * cols;
  for (int64_t k = 0; k < cols; ++k) {
    __m256 xk[T];
    for (int c = 0; c < T; ++c) xk[c] = _mm256_set1_ps(xc[c * cols + k]);
    for (int q = 0; q < P; ++q) {
      const __m256 w = column8<kType>(panel[q] + k * stride);
      for (int c = 0; c < T; ++c) acc[q][c] = _mm256_fmadd_ps(xk[c], w, acc[q][c]);
    }
  }
  const __m256i lane = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  for (int q = 0; q < P; ++q) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows[q]), lane);
    for (int c = 0; c < T; ++c) {
      float* out = y + (n0 + c) * ld + r0 + q * kPanel;
      const __m256 v = accumulate ? _mm256_add_ps(_mm256_maskload_ps(out, mask), acc[q][c]) : acc[q][c];
      _mm256_maskstore_ps(out, mask, v);
    }
  }
}
#else
// NEON: panels of 16 rows (4 vectors of outputs, the height of the prebuilt panels), one against
// up to 6 rows of x (24 accumulators, 4 weight vectors and x in the 32 registers); the same
// chain per output as the x86 kernels.
constexpr int kPanel = 16;  // weight rows per panel
constexpr int kPanels = 1;  // panels per micro-kernel call
constexpr int kTile = 6;    // x rows per micro-kernel call: 4 x 6 accumulators in registers

// 4 weights from `at` on, widened to F32.
template <WeightType kType>
inline float32x4_t load4(const uint8_t* at) {
  if constexpr (kType == WeightType::f32) return vld1q_f32(reinterpret_cast<const float*>(at));
  const uint16x4_t h = vld1_u16(reinterpret_cast<const uint16_t*>(at));
  if constexpr (kType == WeightType::bf16) return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
  return vcvt_f32_f16(vreinterpret_f16_u16(h));  // f16
}

// panel[k * 16 + i] = W[first + i][k] for i < rows, zero for rows <= i < 16: 4 x 4 blocks.
template <WeightType kType>
void pack_panel(const uint8_t* first, int64_t row_bytes, int rows, int64_t cols, float* panel) {
  constexpr int64_t kBytes = kType == WeightType::f32 ? 4 : 2;  // per weight
  float32x4_t v[4];
  for (int64_t k = 0; k < cols; k += 4) {
    const int width = static_cast<int>(std::min<int64_t>(4, cols - k));
    for (int g = 0; g < kPanel; g += 4) {
      for (int i = 0; i < 4; ++i) {
        const uint8_t* at = first + (g + i) * row_bytes + kBytes * k;
        if (g + i >= rows) {
          v[i] = vdupq_n_f32(0.0f);
        } else if (width == 4) {
          v[i] = load4<kType>(at);
        } else {  // the last up to 3 columns, through a zeroed copy
          alignas(16) uint8_t part[16] = {};
          std::memcpy(part, at, width * kBytes);
          v[i] = load4<kType>(part);
        }
      }
      transpose4(v);
      for (int j = 0; j < width; ++j) vst1q_f32(panel + (k + j) * kPanel + g, v[j]);
    }
  }
}

// y[n0 + c][r0 + 16 q + i] for c < T, q < P: panel q (rows[q] real rows; column k at panel[q] +
// k * stride, F32 panels packed per call or prebuilt BF16 / F16 ones) against x row n0 + c,
// acc = fma(x[k], w[k], acc) for k = 0 .. cols - 1.
template <WeightType kType, int P, int T>
void tile(const uint8_t* const* panel, int64_t stride, const float* x, int64_t cols, int64_t n0, int64_t r0,
          const int* rows, float* y, int64_t ld, bool accumulate) {
  constexpr int64_t kBytes = kType == WeightType::f32 ? 4 : 2;
  constexpr int kVecs = kPanel / 4;
  float32x4_t acc[P][T][kVecs];
  for (auto& p : acc)
    for (auto& t : p)
      for (auto& a : t) a = vdupq_n_f32(0.0f);
  const float* xc = x + n0 * cols;
  for (int64_t k = 0; k < cols; ++k) {
    float32x4_t w[P][kVecs];
    for (int q = 0; q < P; ++q)
      for (int v = 0; v < kVecs; ++v) w[q][v] = load4<kType>(panel[q] + k * stride + 4 * kBytes * v);
    for (int c = 0; c < T; ++c) {
      const float xk = xc[c * cols + k];
      for (int q = 0; q < P; ++q)
        for (int v = 0; v < kVecs; ++v) acc[q][c][v] = vfmaq_n_f32(acc[q][c][v], w[q][v], xk);
    }
  }
  for (int q = 0; q < P; ++q)
    for (int c = 0; c < T; ++c) {
      float* out = y + (n0 + c) * ld + r0 + q * kPanel;
      alignas(16) float sum[kPanel];
      for (int v = 0; v < kVecs; ++v) vst1q_f32(sum + 4 * v, acc[q][c][v]);
      for (int i = 0; i < rows[q]; ++i) out[i] = accumulate ? out[i] + sum[i] : sum[i];
    }
}
#endif

using PackPanel = void (*)(const uint8_t*, int64_t, int, int64_t, float*);

PackPanel pack_for(WeightType type) {
  switch (type) {
    case WeightType::f32: return pack_panel<WeightType::f32>;
    case WeightType::bf16: return pack_panel<WeightType::bf16>;
    default: return pack_panel<WeightType::f16>;
  }
}

// The last t (< T) rows of x: the tile of t rows.
template <WeightType kType, int P, int T>
void tail_tile(int t, const uint8_t* const* panel, int64_t stride, const float* x, int64_t cols, int64_t n0,
               int64_t r0, const int* rows, float* y, int64_t ld, bool accumulate) {
  if constexpr (T > 0) {
    if (t == T) return tile<kType, P, T>(panel, stride, x, cols, n0, r0, rows, y, ld, accumulate);
    tail_tile<kType, P, T - 1>(t, panel, stride, x, cols, n0, r0, rows, y, ld, accumulate);
  }
}

// All N rows of x against the first `used` (1 .. P) panels: tiles of kTile rows, then one tail
// tile.
template <WeightType kType, int P>
void rows_of_x(int used, const uint8_t* const* panel, int64_t stride, const float* x, int64_t cols, int64_t N,
               int64_t r0, const int* rows, float* y, int64_t ld, bool accumulate) {
  if constexpr (P > 1)
    if (used < P) return rows_of_x<kType, P - 1>(used, panel, stride, x, cols, N, r0, rows, y, ld, accumulate);
  int64_t n0 = 0;
  for (; n0 + kTile <= N; n0 += kTile) tile<kType, P, kTile>(panel, stride, x, cols, n0, r0, rows, y, ld, accumulate);
  if (n0 < N)
    tail_tile<kType, P, kTile - 1>(static_cast<int>(N - n0), panel, stride, x, cols, n0, r0, rows, y, ld, accumulate);
}

// Spans of kPanels kernel panels over the threads, each against every row of x. The weights are
// either W's prebuilt panels of 16 rows (weight_panels.h: AVX-512 and NEON take one per kernel
// panel, AVX2 two per span, their halves the kernel's panels of 8) or widened to F32 panels per
// call.
template <WeightType kType>
void gemm_spans(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  constexpr int64_t kSpan = kPanels * kPanel;
  static_assert(kSpan % kPanelHeight == 0 && kPanelHeight % kPanel == 0);
  const int64_t spans = (W.rows + kSpan - 1) / kSpan;
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);  // its checks, before the region
  const bool prebuilt = W.panels && W.type != WeightType::f32;
  const int64_t stored_bytes = prebuilt ? panel_bytes(W.type, W.cols) : 0;  // one prebuilt panel
  const int64_t panel_floats = W.cols * kPanel;  // a vector a column: packed panels stay aligned to it
  // one thread for small products (a team costs more than it saves); the bits are the same
  const int threads = spans > 1 && worth_parallel(N * W.rows * W.cols) ? thread_count() : 1;
  Buffer<float> own(prebuilt ? 0 : threads * kPanels * panel_floats);  // kPanels per thread, before the region
#pragma omp parallel num_threads(threads)
  {
    float* packed = own.data() + thread_index() * kPanels * panel_floats;
    // dynamic: spans differ (the last one) and so do the two cores' loads; a span's result does
    // not depend on the thread that computes it
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < spans; ++i) {
      const int64_t r0 = i * kSpan;
      int rows[kPanels], used = 0;
      const uint8_t* panel[kPanels];
      for (int q = 0; q < kPanels; ++q) {
        rows[q] = static_cast<int>(std::clamp<int64_t>(W.rows - r0 - q * kPanel, 0, kPanel));
        if (rows[q] == 0) continue;
        const int64_t first = r0 + q * kPanel;
        if (prebuilt) {
          panel[q] = static_cast<const uint8_t*>(W.panels) + first / kPanelHeight * stored_bytes +
                     2 * (first % kPanelHeight);
        } else {
          pack_for(W.type)(static_cast<const uint8_t*>(W.data) + first * row_bytes, row_bytes, rows[q], W.cols,
                           packed + q * panel_floats);
          panel[q] = reinterpret_cast<const uint8_t*>(packed + q * panel_floats);
        }
        ++used;
      }
      if (prebuilt)
        rows_of_x<kType, kPanels>(used, panel, 2 * kPanelHeight, x, W.cols, N, r0, rows, y, W.rows, accumulate);
      else
        rows_of_x<WeightType::f32, kPanels>(used, panel, 4 * kPanel, x, W.cols, N, r0, rows, y, W.rows, accumulate);
    }
  }
}

}  // namespace

bool gemm_float_available(WeightType type) {
  return type == WeightType::f32 || type == WeightType::bf16 || type == WeightType::f16;
}

bool gemm_float_reads_panels(WeightType type) { return type == WeightType::bf16 || type == WeightType::f16; }

void gemm_float(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  switch (W.type) {
    case WeightType::bf16: return gemm_spans<WeightType::bf16>(W, x, y, N, accumulate);
    case WeightType::f16: return gemm_spans<WeightType::f16>(W, x, y, N, accumulate);
    default: return gemm_spans<WeightType::f32>(W, x, y, N, accumulate);
  }
}
#else
bool gemm_float_available(WeightType) { return false; }
bool gemm_float_reads_panels(WeightType) { return false; }
void gemm_float(const WeightMatrix&, const float*, float*, int64_t, bool) {}
#endif

}  // namespace difftx::DIFFTX_ISA::quant
