#include "kernels/quant/gemm_float.h"

#include <algorithm>
#include <type_traits>

#include "kernels/isa.h"
#include "kernels/quant/type_kernels.h"

#include "kernels/simd.h"

#if DIFFTX_SIMD_FMA
#include <cstring>

#include "core/buffer.h"
#include "core/threading.h"
#include "kernels/op_threading.h"
#include "kernels/quant/weight_panels.h"
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {

#if DIFFTX_SIMD_FMA
namespace {

using ::difftx::kernels::quant::kPanelHeight;
using ::difftx::kernels::quant::panel_bytes;

const FloatTag d;
constexpr int kLanes = static_cast<int>(hn::MaxLanes(d));
// Per target: kPanel weight rows per kernel panel (kVecs vectors of outputs), kPanels panels per
// micro-kernel call and kTile rows of x, so that the kPanels x kTile x kVecs accumulators and the
// operands of one k fit the vector registers. AVX2 (16 registers): 4 panels of 8 rows against 3
// rows of x, 4 panels keeping 4 FMA chains in flight for a decode row, where 2 left the FMA
// latency exposed (F16 decode 0.95x llama.cpp's AVX2 library, docs/BENCHMARKS.md). AVX3 (32):
// 3 panels of 16 against 8. NEON (32): 1 panel of 16 rows (4 vectors, the height of the prebuilt
// panels) against 6.
#if HWY_TARGET == HWY_AVX2
constexpr int kPanel = 8, kPanels = 4, kTile = 3;
#elif HWY_ARCH_X86
constexpr int kPanel = 16, kPanels = 3, kTile = 8;
#else
constexpr int kPanel = 16, kPanels = 1, kTile = 6;
#endif
constexpr int kVecs = kPanel / kLanes;

// kLanes weights from `at` on (a row of W, or a column of a panel), widened to F32.
template <WeightType kType>
inline FloatVec load_weights(const uint8_t* at) {
  if constexpr (kType == WeightType::f32) return hn::LoadU(d, reinterpret_cast<const float*>(at));
  using Half = std::conditional_t<kType == WeightType::bf16, hwy::bfloat16_t, hwy::float16_t>;
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<Half, FloatTag>(), reinterpret_cast<const Half*>(at)));
}

// panel[k * kPanel + i] = W[first + i][k] for i < rows, zero for rows <= i < kPanel: square
// blocks of kLanes rows and columns, transposed in registers.
template <WeightType kType>
void pack_panel(const uint8_t* first, int64_t row_bytes, int rows, int64_t cols, float* panel) {
  FloatVec v[kLanes];
  for (int64_t k = 0; k < cols; k += kLanes) {
    const int width = static_cast<int>(std::min<int64_t>(kLanes, cols - k));
    for (int g = 0; g < kPanel; g += kLanes) {
      for (int i = 0; i < kLanes; ++i) {
        const uint8_t* at = first + (g + i) * row_bytes + float_weight_bytes(kType) * k;
        if (g + i >= rows) {
          v[i] = hn::Zero(d);
        } else if (width == kLanes) {
          v[i] = load_weights<kType>(at);
        } else {  // the last columns, through a zeroed copy
          alignas(64) uint8_t part[4 * kLanes] = {};
          std::memcpy(part, at, width * float_weight_bytes(kType));
          v[i] = load_weights<kType>(part);
        }
      }
      transpose_square(d, v);
      for (int j = 0; j < width; ++j) hn::Store(v[j], d, panel + (k + j) * kPanel + g);
    }
  }
}

// y[n0 + c][r0 + kPanel q + i] for c < T, q < P: panel q (rows[q] real rows; column k at panel[q]
// + k * stride, F32 panels packed per call or prebuilt BF16 / F16 ones, weight_panels.h) against
// x row n0 + c, acc = fma(x[k], w[k], acc) for k = 0 .. cols - 1. Per k, the smaller operand set
// is loaded first: the weight columns (AVX3, NEON) or the broadcast x (AVX2).
template <WeightType kType, int P, int T>
void tile(const uint8_t* const* panel, int64_t stride, const float* x, int64_t cols, int64_t n0, int64_t r0,
          const int* rows, float* y, int64_t ld, bool accumulate) {
  FloatVec acc[P][T][kVecs];
  for (auto& p : acc)
    for (auto& t : p)
      for (auto& a : t) a = hn::Zero(d);
  const float* xc = x + n0 * cols;
  for (int64_t k = 0; k < cols; ++k) {
    const auto column = [&](int q, int v) {
      return load_weights<kType>(panel[q] + k * stride + float_weight_bytes(kType) * kLanes * v);
    };
    if constexpr (P * kVecs <= T) {
      FloatVec w[P][kVecs];
      for (int q = 0; q < P; ++q)
        for (int v = 0; v < kVecs; ++v) w[q][v] = column(q, v);
      for (int c = 0; c < T; ++c) {
        const FloatVec xk = hn::Set(d, xc[c * cols + k]);
        for (int q = 0; q < P; ++q)
          for (int v = 0; v < kVecs; ++v) acc[q][c][v] = hn::MulAdd(xk, w[q][v], acc[q][c][v]);
      }
    } else {
      FloatVec xk[T];
      for (int c = 0; c < T; ++c) xk[c] = hn::Set(d, xc[c * cols + k]);
      for (int q = 0; q < P; ++q)
        for (int v = 0; v < kVecs; ++v) {
          const FloatVec w = column(q, v);
          for (int c = 0; c < T; ++c) acc[q][c][v] = hn::MulAdd(xk[c], w, acc[q][c][v]);
        }
    }
  }
  for (int q = 0; q < P; ++q)
    for (int c = 0; c < T; ++c) {
      float* out = y + (n0 + c) * ld + r0 + q * kPanel;
      if (rows[q] == kPanel) {
        for (int v = 0; v < kVecs; ++v) {
          float* at = out + kLanes * v;
          hn::StoreU(accumulate ? hn::Add(hn::LoadU(d, at), acc[q][c][v]) : acc[q][c][v], d, at);
        }
      } else {  // the last panel of W, through a copy
        alignas(64) float sum[kPanel];
        for (int v = 0; v < kVecs; ++v) hn::Store(acc[q][c][v], d, sum + kLanes * v);
        for (int i = 0; i < rows[q]; ++i) out[i] = accumulate ? out[i] + sum[i] : sum[i];
      }
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
          pack_panel<kType>(static_cast<const uint8_t*>(W.data) + first * row_bytes, row_bytes, rows[q], W.cols,
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

void register_gemm_float(TypeKernelTable& table) {
  table[WeightType::f32].gemm_float = gemm_spans<WeightType::f32>;
  table[WeightType::bf16].gemm_float = gemm_spans<WeightType::bf16>;
  table[WeightType::bf16].gemm_float_reads_panels = true;
  table[WeightType::f16].gemm_float = gemm_spans<WeightType::f16>;
  table[WeightType::f16].gemm_float_reads_panels = true;
}
#else
void register_gemm_float(TypeKernelTable&) {}
#endif

}  // namespace difftx::kernels::DIFFTX_ISA::quant
