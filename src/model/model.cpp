#include "model/model.h"

namespace difftx {

Model::Model(const ModelConfig& c)
    : config(c), table(c), weights(table.total_floats()), tensors(bind_tensors(c, table, weights.data())) {}

}  // namespace difftx
