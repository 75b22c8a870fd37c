// A model in memory: its config, its parameter table and the weights arena.
#pragma once
#include <string>

#include "core/buffer.h"
#include "model/config.h"
#include "model/parameters.h"

namespace difftx {

struct Model {
  // arena_floats: a larger weights arena than the table needs (zero padding after the last
  // tensor), for collectives that move the arena in equal shards (train/data_parallel.h).
  explicit Model(const ModelConfig& config, int64_t arena_floats = 0);
  Model(Model&&) = default;

  ModelConfig config;
  ParameterTable table;
  Buffer<float> weights;  // laid out by `table`
  ModelTensors tensors;   // views into `weights`
};

}  // namespace difftx
