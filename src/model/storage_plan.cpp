#include "model/storage_plan.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "kernels/quant/quantize.h"
#include "model/formats/stored_matrices.h"

namespace difftx::model {

using kernels::WeightType;

namespace {

bool whole_blocks(WeightType type, int64_t cols) { return cols % kernels::weight_type_info(type).block_weights == 0; }

// Rows quantized in chunks on the threads (rows are independent; quantize_rows only throws for a
// row that is not whole blocks, which the plan has ruled out).
void quantize_parallel(WeightType type, const float* src, unsigned char* dst, int64_t rows, int64_t cols) {
  const int64_t row_bytes = kernels::weight_row_bytes(type, cols), chunk = 16;
#pragma omp parallel for schedule(dynamic)
  for (int64_t r = 0; r < rows; r += chunk)
    backends::cpu::kernels().quantize_rows(type, src + r * cols, dst + r * row_bytes, std::min(chunk, rows - r), cols);
}

}  // namespace

MatrixTypes storage_plan(const ModelConfig& config, WeightType type, std::optional<WeightType> head_type) {
  MatrixTypes types;
  const bool four_bit = type == WeightType::q4_0 || type == WeightType::q4_k;
  const ParameterTable table(config);
  for (const ParamInfo& p : table.params()) {
    if (!p.packable()) continue;
    const bool head = p.model_matrix != nullptr;  // the embedding or the LM head
    WeightType t = !head ? type : head_type ? *head_type : four_bit ? WeightType::q8_0 : type;
    if (!whole_blocks(t, p.shape[1])) t = WeightType::bf16;
    if (t != WeightType::f32) types[p.name] = t;
  }
  return types;
}

void convert_tensor(const ParamInfo& p, std::span<const float> widened, unsigned char* dst) {
  DIFFTX_CHECK(static_cast<int64_t>(widened.size()) == p.numel, "internal: ", p.name, " has ", p.numel,
               " weights, ", widened.size(), " given");
  if (!p.packed()) std::memcpy(dst, widened.data(), sizeof(float) * p.numel);
  else quantize_parallel(p.type, widened.data(), dst, p.shape[0], p.shape[1]);
}

Model convert_matrices(const Model& model, const MatrixTypes& types) {
  Model out(model.config, types);
  for (const ParamInfo& p : out.table.params()) {
    const ParamInfo& source = *model.table.find(p.name);
    if (!p.packed() && !source.packed()) {
      std::memcpy(out.host_weights() + p.offset, model.host_weights() + source.offset, sizeof(float) * p.numel);
      continue;
    }
    const std::vector<float> widened = widened_weight(model, source);
    if (p.packed()) convert_tensor(p, widened, out.host_packed() + p.byte_offset);
    else std::copy(widened.begin(), widened.end(), out.host_weights() + p.offset);
  }
  return out;
}

}  // namespace difftx::model
