// A model in memory: its config, its parameter table and the weights arena.
#pragma once
#include <string>

#include "core/buffer.h"
#include "model/config.h"
#include "model/parameters.h"

namespace difftx {

struct Model {
  explicit Model(const ModelConfig& config);
  Model(Model&&) = default;

  ModelConfig config;
  ParameterTable table;
  Buffer<float> weights;  // laid out by `table`
  ModelTensors tensors;   // views into `weights`
};

}  // namespace difftx
