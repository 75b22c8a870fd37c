// The logits of one whole sequence through the model's own forward: docs/SPEC.md's decoder
// (decoder.h) or a hybrid stack (hybrid_decoder.h). What `difftx logits`, the C API's
// difftx_logits and the Python module's Model.logits compute, bit for bit the same.
#pragma once
#include <cstdint>
#include <span>

#include "model/model.h"

namespace difftx::model {

// ids [T] in host memory (the caller range-checks them and T); out [T, V] in host memory.
void forward_logits(const Model& model, std::span<const int32_t> ids, float* out);

}  // namespace difftx::model
