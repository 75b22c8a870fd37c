#include "kernels/quant/gemm_float.h"

#include <algorithm>

#include "kernels/isa.h"

#ifdef __AVX512F__
#include <immintrin.h>

#include "core/buffer.h"
#include "core/threading.h"
#include "kernels/op_threading.h"
#define DIFFTX_GEMM_FLOAT 1
#endif

namespace difftx::DIFFTX_ISA::quant {

#ifdef DIFFTX_GEMM_FLOAT
namespace {

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

using PackPanel = void (*)(const uint8_t*, int64_t, int, int64_t, float*);

PackPanel pack_for(WeightType type) {
  switch (type) {
    case WeightType::f32: return pack_panel<WeightType::f32>;
    case WeightType::bf16: return pack_panel<WeightType::bf16>;
    default: return pack_panel<WeightType::f16>;
  }
}

// y[n0 + c][r0 + 16 q + lane] for c < T, q < P: panel q (rows[q] real rows) against x row n0 + c,
// acc = fma(x[k], w[k], acc) for k = 0 .. cols - 1.
template <int P, int T>
void tile(const float* panels, int64_t panel_floats, const float* x, int64_t cols, int64_t n0, int64_t r0,
          const int* rows, float* y, int64_t ld, bool accumulate) {
  __m512 acc[P][T];
  for (auto& panel : acc)
    for (auto& a : panel) a = _mm512_setzero_ps();
  const float* xc = x + n0 * cols;
  for (int64_t k = 0; k < cols; ++k) {
    __m512 w[P];
    for (int q = 0; q < P; ++q) w[q] = _mm512_load_ps(panels + q * panel_floats + k * kPanel);
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

// All N rows of x against P packed panels: tiles of kTile rows, then one tail tile.
template <int P>
void rows_of_x(const float* panels, int64_t panel_floats, const float* x, int64_t cols, int64_t N, int64_t r0,
               const int* rows, float* y, int64_t ld, bool accumulate) {
  int64_t n0 = 0;
  for (; n0 + kTile <= N; n0 += kTile) tile<P, kTile>(panels, panel_floats, x, cols, n0, r0, rows, y, ld, accumulate);
  const auto tail = [&]<int T>() { tile<P, T>(panels, panel_floats, x, cols, n0, r0, rows, y, ld, accumulate); };
  switch (N - n0) {
    case 0: return;
    case 1: return tail.template operator()<1>();
    case 2: return tail.template operator()<2>();
    case 3: return tail.template operator()<3>();
    case 4: return tail.template operator()<4>();
    case 5: return tail.template operator()<5>();
    case 6: return tail.template operator()<6>();
    default: return tail.template operator()<7>();
  }
}
static_assert(kTile == 8, "rows_of_x's tail covers 1 to 7 rows of x");

}  // namespace

bool gemm_float_available(WeightType type) {
  return type == WeightType::f32 || type == WeightType::bf16 || type == WeightType::f16;
}

void gemm_float(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  const PackPanel pack = pack_for(W.type);
  const int64_t span = kPanels * kPanel, spans = (W.rows + span - 1) / span;
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);  // its checks, before the region
  const int64_t panel_floats = W.cols * kPanel;  // 64 bytes a column: panels stay 64-byte aligned
  // one thread for small products (a team costs more than it saves); the bits are the same
  const int threads = spans > 1 && worth_parallel(N * W.rows * W.cols) ? thread_count() : 1;
  Buffer<float> own(threads * kPanels * panel_floats);  // kPanels per thread, allocated before the region
#pragma omp parallel num_threads(threads)
  {
    float* panels = own.data() + thread_index() * kPanels * panel_floats;
    // dynamic: spans differ (the last one) and so do the two cores' loads; a span's result does
    // not depend on the thread that computes it
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < spans; ++i) {
      const int64_t r0 = i * span;
      int rows[kPanels], used = 0;
      for (int q = 0; q < kPanels; ++q) {
        rows[q] = static_cast<int>(std::clamp<int64_t>(W.rows - r0 - q * kPanel, 0, kPanel));
        if (rows[q] == 0) continue;
        pack(static_cast<const uint8_t*>(W.data) + (r0 + q * kPanel) * row_bytes, row_bytes, rows[q], W.cols,
             panels + q * panel_floats);
        ++used;
      }
      if (used == 3) rows_of_x<3>(panels, panel_floats, x, W.cols, N, r0, rows, y, W.rows, accumulate);
      else if (used == 2) rows_of_x<2>(panels, panel_floats, x, W.cols, N, r0, rows, y, W.rows, accumulate);
      else rows_of_x<1>(panels, panel_floats, x, W.cols, N, r0, rows, y, W.rows, accumulate);
    }
  }
}
#else
bool gemm_float_available(WeightType) { return false; }
void gemm_float(const WeightMatrix&, const float*, float*, int64_t, bool) {}
#endif

}  // namespace difftx::DIFFTX_ISA::quant
