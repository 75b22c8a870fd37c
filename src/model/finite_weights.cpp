#include "model/finite_weights.h"

#include <cmath>

#include "core/error.h"

namespace difftx {

void require_finite_weights(const Model& model, const std::string& where) {
  for (const ParamInfo& p : model.table.params()) {
    const float* w = model.weights.data() + p.offset;
    for (int64_t i = 0; i < p.numel; ++i)
      DIFFTX_CHECK(std::isfinite(w[i]), where, ": tensor '", p.name, "' holds a non-finite value (", w[i],
                   " at element ", i, "); a model with NaN or Inf weights gives only NaN outputs");
  }
}

}  // namespace difftx
