#include "model/model.h"

#include <algorithm>

namespace difftx {

Model::Model(const ModelConfig& c, int64_t arena_floats)
    : config(c),
      table(c),
      weights(std::max(table.total_floats(), arena_floats)),
      tensors(bind_tensors(c, table, weights.data())) {}

}  // namespace difftx
