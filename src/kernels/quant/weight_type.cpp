#include "kernels/quant/weight_type.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/error.h"
#include "kernels/quant/block_formats.h"

namespace difftx::kernels {
namespace {

// GGML's numbers: ggml_type (ggml.h) F32 0, F16 1, Q4_0 2, Q8_0 8, Q4_K 12, BF16 30; llama_ftype
// (llama.h) ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q4_0 2, MOSTLY_Q8_0 7, MOSTLY_Q4_K_S 14 (every matrix
// Q4_K), MOSTLY_BF16 32. Round-trip errors: F32 exact; BF16 and F16 half a unit in the last place
// of 8 and 11 significant bits; Q8_0 half a step of max/127 plus 127 times the F16 scale's own
// rounding (2^-11); Q4_0 a whole step of max/8 at the clamped end (+8 stores as 7) plus 7 times
// the scale's rounding; Q4_K Q4_0's bound, above the worst measured (0.099 of the block's largest
// over 39 seeds of spread and clustered rows): its sub-block scales and minimums are searched, 6
// bits each, so there is no simple bound.
constexpr WeightTypeInfo kWeightTypes[] = {
    {WeightType::f32, "f32", 1, 4, 0, 0, "F32", 0.0},
    {WeightType::bf16, "bf16", 1, 2, 30, 32, "BF16", 0x1p-8},
    {WeightType::f16, "f16", 1, 2, 1, 1, "F16", 0x1p-11},
    {WeightType::q8_0, "q8_0", kQ8_0Weights, sizeof(BlockQ8_0), 8, 7, "U8", 1.0 / 254 + 0x1p-11},
    {WeightType::q4_0, "q4_0", kQ4_0Weights, sizeof(BlockQ4_0), 2, 2, "U8", 1.0 / 8 + 0x1p-11},
    {WeightType::q4_k, "q4_k", kQ4_KWeights, sizeof(BlockQ4_K), 12, 14, "U8", 1.0 / 8},
};
static_assert(std::size(kWeightTypes) == kWeightTypeCount);

std::string type_names() {
  std::string names;
  for (const WeightTypeInfo& t : kWeightTypes) names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

}  // namespace

std::span<const WeightTypeInfo> weight_types() { return kWeightTypes; }

const WeightTypeInfo& weight_type_info(WeightType type) {
  const auto index = static_cast<size_t>(type);
  DIFFTX_CHECK(index < std::size(kWeightTypes), "weight type: unknown value ", static_cast<int>(type));
  return kWeightTypes[index];
}

WeightType parse_weight_type(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const WeightTypeInfo& t : kWeightTypes)
    if (lower == t.name) return t.type;
  fail("weight type '", name, "': expected one of ", type_names());
}

WeightType weight_type_of_ggml(uint32_t ggml_type) {
  for (const WeightTypeInfo& t : kWeightTypes)
    if (t.ggml_type == ggml_type) return t.type;
  fail("GGML type ", ggml_type, ": difftx stores none such (it has ", type_names(), ")");
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

}  // namespace difftx::kernels
