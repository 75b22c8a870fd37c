#include "kernels/quant/weight_type.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/error.h"
#include "kernels/quant/block_formats.h"

namespace difftx {

const WeightTypeInfo& weight_type_info(WeightType type) {
  // GGML type numbers: F32 0, F16 1, Q4_0 2, Q8_0 8, Q4_K 12, BF16 30 (ggml.h, enum ggml_type).
  static const WeightTypeInfo f32{"f32", 1, 4, 0}, bf16{"bf16", 1, 2, 30}, f16{"f16", 1, 2, 1},
      q8_0{"q8_0", kQ8_0Weights, sizeof(BlockQ8_0), 8}, q4_0{"q4_0", kQ4_0Weights, sizeof(BlockQ4_0), 2},
      q4_k{"q4_k", kQ4_KWeights, sizeof(BlockQ4_K), 12};
  switch (type) {
    case WeightType::f32: return f32;
    case WeightType::bf16: return bf16;
    case WeightType::f16: return f16;
    case WeightType::q8_0: return q8_0;
    case WeightType::q4_0: return q4_0;
    case WeightType::q4_k: return q4_k;
  }
  fail("weight type: unknown value ", static_cast<int>(type));
}

WeightType parse_weight_type(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (WeightType t : {WeightType::f32, WeightType::bf16, WeightType::f16, WeightType::q8_0, WeightType::q4_0,
                       WeightType::q4_k})
    if (lower == weight_type_info(t).name) return t;
  fail("weight type '", name, "': expected one of f32, bf16, f16, q8_0, q4_0, q4_k");
}

int64_t weight_row_bytes(WeightType type, int64_t cols) {
  const WeightTypeInfo& info = weight_type_info(type);
  DIFFTX_CHECK(cols >= 0 && cols % info.block_weights == 0, "weight type ", info.name, ": a row of ", cols,
               " weights is not a whole number of ", info.block_weights, "-weight blocks");
  DIFFTX_CHECK(cols / info.block_weights <= std::numeric_limits<int64_t>::max() / info.block_bytes,
               "weight type ", info.name, ": a row of ", cols, " weights overflows 64-bit sizes");
  return cols / info.block_weights * info.block_bytes;
}

int64_t weight_matrix_bytes(WeightType type, int64_t rows, int64_t cols) {
  const int64_t row = weight_row_bytes(type, cols);
  DIFFTX_CHECK(rows >= 0, "weight matrix: negative row count ", rows);
  DIFFTX_CHECK(row == 0 || rows <= std::numeric_limits<int64_t>::max() / row, "weight matrix ", rows, " x ",
               cols, " of ", weight_type_info(type).name, " overflows 64-bit sizes");
  return rows * row;
}

}  // namespace difftx
