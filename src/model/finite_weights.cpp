#include "model/finite_weights.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/quant/quantize.h"

namespace difftx {
namespace {

void require_finite(const float* w, int64_t n, int64_t first, const std::string& where, const std::string& name) {
  for (int64_t i = 0; i < n; ++i)
    DIFFTX_CHECK(std::isfinite(w[i]), where, ": tensor '", name, "' holds a non-finite value (", w[i],
                 " at element ", first + i, "); a model with NaN or Inf weights gives only NaN outputs");
}

}  // namespace

void require_finite_tensor(std::span<const float> weights, const std::string& name, const std::string& where) {
  require_finite(weights.data(), static_cast<int64_t>(weights.size()), 0, where, name);
}

void require_finite_weights(const Model& model, const std::string& where) {
  std::vector<float> rows;
  for (const ParamInfo& p : model.table.params()) {
    if (!p.packed()) {
      require_finite(model.weights.data() + p.offset, p.numel, 0, where, p.name);
      continue;
    }
    // Packed matrices are checked as they multiply: widened, a few rows at a time.
    const int64_t cols = p.shape[1], row_bytes = p.bytes() / p.shape[0], chunk = 64;
    rows.resize(chunk * cols);
    for (int64_t r = 0; r < p.shape[0]; r += chunk) {
      const int64_t n = std::min(chunk, p.shape[0] - r);
      dequantize_rows(p.type, model.packed.data() + p.byte_offset + r * row_bytes, rows.data(), n, cols);
      require_finite(rows.data(), n * cols, r * cols, where, p.name);
    }
  }
}

}  // namespace difftx
