// AdamW over a parameter arena, with clipping by the global gradient norm. Weight decay applies
// to matrices only (ParamInfo::decay): embeddings, projections and the LM head decay; norm
// gains and lambda vectors do not.
//
// An optimizer may own only some pieces of the arena (ZeRO-1 data parallelism: each rank
// updates its own pieces, train/data_parallel.h). Its moments and the gradients it is given
// are then "shards": the owned pieces packed one after another, in the order given.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "model/parameters.h"

namespace difftx::train {

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  double grad_clip = 1.0;  // clip the global gradient norm to this; <= 0 disables clipping
};

// A range [begin, end) of arena floats.
struct ArenaPiece {
  int64_t begin, end;
};

class AdamW {
 public:
  // pieces: the owned ranges of the arena, in shard order; empty: the whole arena (then a
  // shard is laid out like the arena itself). The moments live on `backend`, where the
  // weights and gradients are.
  AdamW(backends::Backend& backend, const model::ParameterTable& table, const AdamWConfig& config,
        std::vector<ArenaPiece> pieces = {});

  // Sum of squares of a gradient shard (the global norm is the root of its sum over shards).
  double gradient_sum_of_squares(backends::DevicePtr<const float> grads) const;
  // The L2 norm of a gradient shard (of the whole gradient when the optimizer owns everything).
  double gradient_norm(backends::DevicePtr<const float> grads) const;
  // One update of the owned pieces of `weights` (the whole arena) from a gradient shard at
  // learning rate lr, clipping by grad_norm (the global norm).
  void step(backends::DevicePtr<float> weights, backends::DevicePtr<const float> grads, double lr, double grad_norm);

  int64_t steps_taken() const { return step_; }
  void set_steps_taken(int64_t s) { step_ = s; }
  // The moment shards, and their floats.
  backends::DevicePtr<float> first_moment() const { return m_.as<float>(); }
  backends::DevicePtr<float> second_moment() const { return v_.as<float>(); }
  int64_t shard_floats() const { return shard_floats_; }
  const AdamWConfig& config() const { return config_; }

 private:
  // A run of one tensor's floats updated as one work item: weights at arena offset `weight`,
  // gradients and moments at shard offset `shard`.
  struct Chunk {
    int64_t weight, shard, numel;
    bool decay;
  };
  backends::Backend& backend_;
  const model::ParameterTable& table_;
  AdamWConfig config_;
  std::vector<ArenaPiece> pieces_;
  std::vector<Chunk> chunks_;
  int64_t shard_floats_;
  backends::DeviceBuffer m_, v_;
  int64_t step_ = 0;
};

}  // namespace difftx::train
