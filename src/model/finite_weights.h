// Weights must be finite: a NaN or Inf in any tensor makes every output NaN, so a model with
// one is refused when it is loaded and never written as a checkpoint.
#pragma once
#include <span>
#include <string>

#include "model/model.h"

namespace difftx::model {

// Throws an Error naming `where`, the first tensor holding a NaN or Inf, and its first such
// element's index.
void require_finite_weights(const Model& model, const std::string& where);
// The same for one tensor's F32 weights, `name` naming it.
void require_finite_tensor(std::span<const float> weights, const std::string& name, const std::string& where);

}  // namespace difftx::model
