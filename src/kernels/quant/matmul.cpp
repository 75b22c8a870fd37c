#include "kernels/quant/matmul.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "core/threading.h"
#include "kernels/gemm.h"
#include "kernels/op_threading.h"
#include "kernels/quant/quantize.h"
#include "kernels/quant/row_dots.h"
#include "kernels/quant/type_kernels.h"
#include "kernels/quant/weight_panels.h"
#include "backends/cpu/cpu_level.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {

// From this many rows of x on, a product is a GEMM (each weight unpacked once, used N times):
// for the block types int8 x with repacked weight panels (gemm_int8.h), for BF16 and F16
// panels widened to F32 and multiplied by sgemm (F32 panels taken as they are). Below it, N GEMVs.
constexpr int64_t kGemmMinRows = 8;
constexpr int64_t kPanelRows = 256;  // weight rows widened at a time (a panel of 256 x cols floats)

void check_operands(const WeightMatrix& W, const float* x, const float* y, int64_t N) {
  DIFFTX_CHECK(W.rows >= 0 && W.cols >= 0 && N >= 0, "matmul: negative size rows=", W.rows, " cols=", W.cols,
               " N=", N);
  weight_matrix_bytes(W.type, W.rows, W.cols);  // block multiple and overflow
  const int64_t most = std::numeric_limits<int64_t>::max();
  DIFFTX_CHECK(N == 0 || (W.cols <= most / N && W.rows <= most / N), "matmul: N=", N, " x ", W.rows, " x ",
               W.cols, " overflows 64-bit sizes");
  DIFFTX_CHECK(N == 0 || W.rows == 0 || ((W.data || W.panels) && x && y), "matmul: null weights, x or y");
}

quant::RowDots pick_row_dots(const quant::TypeKernels& kernels, WeightType type, MatmulPath path) {
  // best: int8 for Q4_0 and Q4_K (1.9x and 1.8x faster than widening to F32 with AVX-512);
  // Q8_0 reads at the same rate either way (AVX-512 and AVX2) and keeps x exact
  // (docs/BENCHMARKS.md)
  const bool int8_best = type != WeightType::q8_0;
  if (path == MatmulPath::simd_int8 || (path == MatmulPath::best && int8_best))
    if (kernels.row_dots_int8) return kernels.row_dots_int8;
  if (path != MatmulPath::scalar)
    if (kernels.row_dots_widened) return kernels.row_dots_widened;
  return kernels.row_dots_scalar;
}

// y[n][r] (+)= W[r] . x[n] for every row of W and of x: groups of kRowsPerDot weight rows over
// the threads; within a group, the rows of x kXRowsPerDot at a time, so that the group's weights
// come from memory once for all N and are unpacked once per kXRowsPerDot rows of x. Every output
// is the row dots' sum of its weight row and x row alone: the same bits for any N and any
// other rows, N = 1 being the decode GEMV.
void gemv_rows(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulPath path) {
  const quant::TypeKernels& kernels = quant::type_kernels(W.type);
  const quant::RowDots dots = pick_row_dots(kernels, W.type, path);
  const bool int8 = dots == kernels.row_dots_int8;
  std::vector<quant::PreparedX> px(N);
#pragma omp parallel for schedule(static) if (N > 1 && worth_parallel(N * W.cols))
  for (int64_t n = 0; n < N; ++n) quant::prepare_x(W.type, int8, x + n * W.cols, W.cols, px[n]);
  const int64_t groups = (W.rows + quant::kRowsPerDot - 1) / quant::kRowsPerDot;
#pragma omp parallel for schedule(static) if (worth_parallel(N * W.rows * W.cols))
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t r0 = g * quant::kRowsPerDot;
    const int n = static_cast<int>(std::min<int64_t>(quant::kRowsPerDot, W.rows - r0));
    for (int64_t j0 = 0; j0 < N; j0 += quant::kXRowsPerDot) {
      const int m = static_cast<int>(std::min<int64_t>(quant::kXRowsPerDot, N - j0));
      float out[quant::kXRowsPerDot * quant::kRowsPerDot];
      dots(W, px.data() + j0, m, r0, n, out);
      for (int j = 0; j < m; ++j) {
        float* yj = y + (j0 + j) * W.rows + r0;
        const float* oj = out + j * quant::kRowsPerDot;
        for (int i = 0; i < n; ++i) yj[i] = accumulate ? yj[i] + oj[i] : oj[i];
      }
    }
  }
}

// Panels of kPanelRows weight rows, each widened to F32 by one thread (F32 weights are read in
// place) and multiplied by a single-threaded sgemm (OpenBLAS runs on one thread inside a
// parallel region): y[:, panel] (+)= x panel^T. One parallel region for the whole product; a
// panel's result does not depend on which thread computes it, so the bits do not depend on the
// thread count (OpenBLAS's own threading of one large sgemm does change them with its AVX2
// kernels).
void gemm_panels(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);
  const int64_t panels = (W.rows + kPanelRows - 1) / kPanelRows;
  const bool widen = W.type != WeightType::f32;
  const int64_t panel_floats = widen ? std::min(kPanelRows, W.rows) * W.cols : 0;
  const int threads = thread_count();
  Buffer<float> own(threads * panel_floats);  // one panel per thread, allocated outside the region
#pragma omp parallel num_threads(threads)
  {
    float* own_panel = own.data() + thread_index() * panel_floats;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < panels; ++i) {
      const int64_t r0 = i * kPanelRows, p = std::min(kPanelRows, W.rows - r0);
      const uint8_t* rows = static_cast<const uint8_t*>(W.data) + r0 * row_bytes;
      const float* panel = reinterpret_cast<const float*>(rows);
      if (widen) {
        dequantize_rows(W.type, rows, own_panel, p, W.cols);
        panel = own_panel;
      }
      gemm(Trans::N, Trans::T, N, p, W.cols, 1.0f, x, W.cols, panel, W.cols, accumulate ? 1.0f : 0.0f, y + r0,
           W.rows);
    }
  }
}

}  // namespace

void matmul(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulOrder order);

void matmul(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulPath path) {
  if (!W.data) return DIFFTX_ISA::matmul(W, x, y, N, accumulate, MatmulOrder::gemm);  // held as panels only
  check_operands(W, x, y, N);
  if (N == 0 || W.rows == 0) return;
  if (W.cols == 0) {  // empty sums
    if (!accumulate) std::fill(y, y + N * W.rows, 0.0f);
    return;
  }
  if (N >= kGemmMinRows) {
    const quant::Gemm gemm_int8 = quant::type_kernels(W.type).gemm_int8;
    if (path != MatmulPath::simd && path != MatmulPath::scalar && gemm_int8)
      gemm_int8(W, x, y, N, accumulate);
    else
      gemm_panels(W, x, y, N, accumulate);
    return;
  }
  gemv_rows(W, x, y, N, accumulate, path);
}

bool row_dots_int8_available(WeightType type) { return quant::type_kernels(type).row_dots_int8 != nullptr; }

void matmul(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulOrder order) {
  if (order == MatmulOrder::by_size) return DIFFTX_ISA::matmul(W, x, y, N, accumulate, MatmulPath::best);
  check_operands(W, x, y, N);
  if (N == 0 || W.rows == 0) return;
  if (W.cols == 0) {
    if (!accumulate) std::fill(y, y + N * W.rows, 0.0f);
    return;
  }
  // a matrix with prebuilt panels takes the GEMM's order for both: no repacking, and (block
  // types) fewer instructions per weight than the row dots at any N
  const quant::TypeKernels& kernels = quant::type_kernels(W.type);
  const bool panels = W.panels && (kernels.gemm_int8_reads_panels || kernels.gemm_float_reads_panels);
  DIFFTX_CHECK(W.data || panels, "matmul: a ", weight_type_name(W.type),
               " matrix held only as weight panels, which CPU level ", cpu_level_name(cpu_level()), " cannot read");
  const bool gemm = order == MatmulOrder::gemm || panels;
  if (gemm && kernels.gemm_int8) return kernels.gemm_int8(W, x, y, N, accumulate);
  if (gemm && kernels.gemm_float) return kernels.gemm_float(W, x, y, N, accumulate);
  gemv_rows(W, x, y, N, accumulate, MatmulPath::best);
}

}  // namespace difftx::kernels::DIFFTX_ISA
