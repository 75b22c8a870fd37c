// Products and the embedding: weights read in their stored type and widened in registers
// (shaders/weights.glsl). A matrix larger than one binding is read in windows of whole rows,
// each window a dispatch writing its own columns of y. The cooperative-matrix GEMM splits a narrow
// matrix's columns (gemm_slices).
#include <algorithm>

#include "backends/vulkan/vulkan_backend.h"
#include "core/error.h"
#include "kernels/quant/weight_type.h"

namespace difftx::backends::vulkan {
namespace {

constexpr int64_t kGemvRows = 16;  // rows of x one GEMV dispatch takes (the largest NMAX of matmul_gemv.comp)
constexpr int64_t kGemvWeightRows = 4;  // weight rows a GEMV workgroup takes (ROWS)
constexpr int64_t kGemmMinRows = 8;  // MatmulOrder::by_size: the GEMM from here (kernels/quant/matmul.h)

struct MatmulPush {
  uint32_t w_byte, row_bytes, rows, cols, x_at, y_at, y_stride, n, accumulate;
};
struct CoopmatPush {
  MatmulPush matmul;
  uint32_t slice_cols, slice_floats;
};
struct SlicesPush {
  uint32_t rows, n, slices, slice_floats, y_at, y_stride, accumulate;
};

// Split-K for the cooperative-matrix GEMM. A matrix of fewer weight rows than kSplitBelowRows has
// fewer tiles of 128 than a large GPU has cores (the H200's 132) on a prompt of 512 rows: 16 for
// the 1.2B shape's q and o, each then a workgroup alone on its core, waiting out every step's
// loads. Its columns are split into slices of at least kSliceMinColumns (at most
// Capabilities::gemm_max_slices, whole tiles of 32), a workgroup each, whose partial sums
// matmul_slices.comp adds in slice order: a function of the matrix alone, so a row's bits do not
// depend on the batch.
constexpr int64_t kSplitBelowRows = 4096;
constexpr int64_t kSliceMinColumns = 1024;
constexpr int64_t kSliceRows = 1024;  // rows of x a split dispatch takes: its partial sums' memory

int64_t gemm_slices(const DeviceMatrix& W, int64_t max_slices) {
  return W.rows < kSplitBelowRows ? std::clamp<int64_t>(W.cols / kSliceMinColumns, 1, max_slices) : 1;
}

struct EmbedPush {
  uint32_t w_byte, row_bytes, cols, row0, rows, table_rows, ids_at, out_at, n;
};

std::string type_shader(const std::string& family, kernels::WeightType type) {
  return family + "_" + kernels::weight_type_name(type);
}

// The GEMV variant for n rows of x: the smallest power of two that holds them, reading x and the
// weights 16 bytes at a time where every row of each starts 16-byte aligned in its binding ("u"
// otherwise; Q8_0 and Q4_0 read their blocks a word at a time, wherever the rows start).
std::string gemv_family(int64_t n, uint32_t x_at, int64_t cols, kernels::WeightType type, uint32_t w_byte,
                        int64_t row_bytes) {
  int64_t rows = 1;
  while (rows < n) rows *= 2;
  const bool word_blocks = type == kernels::WeightType::q8_0 || type == kernels::WeightType::q4_0;
  const bool aligned = x_at % 4 == 0 && cols % 4 == 0 && (word_blocks || (w_byte % 16 == 0 && row_bytes % 16 == 0));
  return "matmul_gemv" + std::to_string(rows) + (aligned ? "" : "u");
}

}  // namespace

// matmul_coopmat.comp's F16 parts (its header): x as hi + lo, to 2^-22 of x plus 2^-25, given F16
// conversions that round to nearest (VulkanTest.GemmKeepsXToTwentyTwoBits checks it on the
// device), whether or not the device flushes F16 subnormals; the weights in F16: F16 ones exactly,
// BF16 ones to 2^-25 below F16's normal range, the block types' dequantized values to 2^-11 too,
// and any below 2^-14 maybe flushed to 0 (the H200 flushes: an x part left subnormal was lost
// there). Two products a column (hi, then lo) into accumulators that tensor cores may truncate. F32
// weights take the F32 GEMM.
MatmulInputRounding VulkanBackend::matmul_input_rounding(kernels::WeightType type) const {
  if (prefill_gemm() == PrefillGemm::plain || type == kernels::WeightType::f32) return {};
  const InputRounding x{0x1p-22, 0x1p-25};
  const InputRounding w = type == kernels::WeightType::f16    ? InputRounding{0, 0, 0x1p-14}
                          : type == kernels::WeightType::bf16 ? InputRounding{0, 0x1p-25, 0x1p-14}
                                                              : InputRounding{0x1p-11, 0x1p-25, 0x1p-14};
  return {x, w, 2, 0x1p-23};
}

PreparedMatrix VulkanBackend::prepare_matrix(const DeviceMatrix& stored, bool, bool) {
  PreparedMatrix prepared{stored, {}};  // the kernels read the stored rows: no second form to build
  prepared.matrix.panels = nullptr;
  return prepared;
}

void VulkanBackend::matmul(const DeviceMatrix& W, DevicePtr<const float> x, DevicePtr<float> y, int64_t N,
                           bool accumulate, kernels::MatmulOrder order) {
  DIFFTX_CHECK(W.rows > 0 && W.cols > 0 && N >= 0, "vulkan matmul: W [", W.rows, ", ", W.cols, "] with ", N,
               " rows of x");
  if (N == 0) return;
  const int64_t row_bytes = kernels::weight_row_bytes(W.type, W.cols);
  DIFFTX_CHECK(W.data.address() % 4 == 0, "vulkan matmul: the weights must start 4-byte aligned");
  const bool gemv = order == kernels::MatmulOrder::gemv || (order == kernels::MatmulOrder::by_size && N < kGemmMinRows);
  const PrefillGemm kind = prefill_gemm();
  const bool coopmat = !gemv && kind != PrefillGemm::plain && W.type != kernels::WeightType::f32;
  // Windows: weight rows that fit one binding; rows of x (and y) that fit one binding each.
  const int64_t weight_rows = rows_per_binding(row_bytes, "the weight matrix");
  const int64_t x_rows = std::min(rows_per_binding(W.cols * 4, "x"), rows_per_binding(W.rows * 4, "y"));
  const int64_t slices = coopmat ? gemm_slices(W, context_->caps().gemm_max_slices) : 1;
  const int64_t slice_cols = ((W.cols + slices - 1) / slices + 31) / 32 * 32;  // whole tiles of columns
  const int64_t n_step = gemv          ? std::min(kGemvRows, x_rows)
                         : slices == 1 ? x_rows
                                       : std::min({x_rows, kSliceRows,
                                                   rows_per_binding(slices * std::min(weight_rows, W.rows) * 4,
                                                                    "split-K's partial sums")});
  for (int64_t r0 = 0; r0 < W.rows; r0 += weight_rows) {
    const int64_t rows = std::min(weight_rows, W.rows - r0);
    const Bound w = bind(W.data.address() + r0 * row_bytes, rows * row_bytes, "matmul weights", false);
    for (int64_t n0 = 0; n0 < N; n0 += n_step) {
      const int64_t n = std::min(n_step, N - n0);
      const Bound xb = bind((x + n0 * W.cols).address(), n * W.cols * 4, "matmul x");
      const Bound yb = bind((y + n0 * W.rows + r0).address(), ((n - 1) * W.rows + rows) * 4, "matmul y");
      const MatmulPush push{w.delta,
                            static_cast<uint32_t>(row_bytes),
                            static_cast<uint32_t>(rows),
                            static_cast<uint32_t>(W.cols),
                            xb.words(),
                            yb.words(),
                            static_cast<uint32_t>(W.rows),
                            static_cast<uint32_t>(n),
                            accumulate ? 1u : 0u};
      const std::vector<VkDescriptorBufferInfo> buffers{w.info, xb.info, yb.info};
      if (gemv) {
        const std::string family = gemv_family(n, xb.words(), W.cols, W.type, w.delta, row_bytes);
        run(type_shader(family, W.type), {1, 1, 1}, buffers, &push, sizeof push,
            (rows + kGemvWeightRows - 1) / kGemvWeightRows);
        continue;
      }
      // A tile's rows of x (BM) and weight rows (BN): matmul_coopmat.comp's, or matmul_gemm.comp's.
      const int64_t tile_rows = coopmat || n > 16 ? 64 : 16, tile_columns = coopmat ? 128 : 64;
      const int64_t tiles_x = (rows + tile_columns - 1) / tile_columns, tiles_y = (n + tile_rows - 1) / tile_rows;
      if (!coopmat) {
        run2d(type_shader("matmul_gemm" + std::to_string(tile_rows), W.type), {1, 1, 1}, buffers, &push, sizeof push,
              tiles_x, tiles_y);
        continue;
      }
      const std::string shader = type_shader(kind == PrefillGemm::emulated ? "matmul_coopmate" : "matmul_coopmat", W.type);
      if (slices == 1) {
        const CoopmatPush whole{push, static_cast<uint32_t>(W.cols), 0};
        run2d(shader, {1, 1, 1}, buffers, &whole, sizeof whole, tiles_x, tiles_y);
        continue;
      }
      // The slices' partial sums, [slice][n][rows], then added into y.
      std::lock_guard lock(mutex_);  // the scratch is the backend's
      const int64_t slice_floats = n * rows;
      const Bound parts = bind(grown(matmul_slices_, slices * slice_floats * 4), slices * slice_floats * 4,
                               "split-K's partial sums");
      MatmulPush to_parts = push;
      to_parts.y_at = parts.words();
      to_parts.y_stride = static_cast<uint32_t>(rows);
      to_parts.accumulate = 0;
      const CoopmatPush sliced{to_parts, static_cast<uint32_t>(slice_cols), static_cast<uint32_t>(slice_floats)};
      run2d(shader, {1, 1, 1}, {w.info, xb.info, parts.info}, &sliced, sizeof sliced, tiles_x, tiles_y * slices);
      const SlicesPush sum{static_cast<uint32_t>(rows), static_cast<uint32_t>(n), static_cast<uint32_t>(slices),
                           static_cast<uint32_t>(slice_floats), yb.words(), static_cast<uint32_t>(W.rows),
                           accumulate ? 1u : 0u};
      run("matmul_slices", {1, 1}, {parts.info, yb.info}, &sum, sizeof sum, (slice_floats + 255) / 256);
    }
  }
}

void VulkanBackend::embed(const DeviceMatrix& E, DevicePtr<const int32_t> tokens, DevicePtr<float> out, int64_t N) {
  DIFFTX_CHECK(E.rows > 0 && E.cols > 0 && N >= 0, "vulkan embed: table [", E.rows, ", ", E.cols, "] with ", N,
               " tokens");
  if (N == 0) return;
  DIFFTX_CHECK(E.data.address() % 4 == 0, "vulkan embed: the table must start 4-byte aligned");
  const int64_t row_bytes = kernels::weight_row_bytes(E.type, E.cols);
  const int64_t table_rows = rows_per_binding(row_bytes, "the embedding table");
  const int64_t token_rows = std::min(rows_per_binding(4, "tokens"), rows_per_binding(E.cols * 4, "embed out"));
  const std::string shader = type_shader("embed", E.type);
  for (int64_t r0 = 0; r0 < E.rows; r0 += table_rows) {
    const int64_t rows = std::min(table_rows, E.rows - r0);
    const Bound w = bind(E.data.address() + r0 * row_bytes, rows * row_bytes, "embedding table", false);
    for (int64_t n0 = 0; n0 < N; n0 += token_rows) {
      const int64_t n = std::min(token_rows, N - n0);
      const Bound ids = bind((tokens + n0).address(), n * 4, "embed tokens");
      const Bound o = bind((out + n0 * E.cols).address(), n * E.cols * 4, "embed out");
      const EmbedPush push{w.delta,
                           static_cast<uint32_t>(row_bytes),
                           static_cast<uint32_t>(E.cols),
                           static_cast<uint32_t>(r0),
                           static_cast<uint32_t>(rows),
                           static_cast<uint32_t>(E.rows),
                           ids.words(),
                           o.words(),
                           static_cast<uint32_t>(n)};
      run(shader, {1, 1, 1}, {w.info, ids.info, o.info}, &push, sizeof push, n);
    }
  }
}

}  // namespace difftx::backends::vulkan
