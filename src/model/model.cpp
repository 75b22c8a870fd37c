#include "model/model.h"

#include <algorithm>

#include "core/error.h"

namespace difftx {

Model::Model(const ModelConfig& c, int64_t arena_floats)
    : config(c),
      table(c),
      weights(std::max(table.total_floats(), arena_floats)),
      tensors(bind_tensors(c, table, weights.data())),
      matrices(bind_matrices(c, table, weights.data(), nullptr)) {}

Model::Model(const ModelConfig& c, const MatrixTypes& types)
    : config(c),
      table(c, types),
      weights(table.total_floats()),
      packed(table.packed_bytes()),
      tensors(bind_tensors(c, table, weights.data())),
      matrices(bind_matrices(c, table, weights.data(), packed.data())) {}

int64_t Model::weight_bytes() const {
  int64_t bytes = 0;
  for (const ParamInfo& p : table.params()) bytes += p.bytes();
  return bytes;
}

void require_f32_weights(const Model& model, const std::string& what) {
  if (model.table.all_f32()) return;
  for (const ParamInfo& p : model.table.params())
    DIFFTX_CHECK(!p.packed(), what, " needs F32 weights, but tensor '", p.name, "' is held as ",
                 weight_type_name(p.type), " (load the model with its matrices widened to F32)");
}

}  // namespace difftx
