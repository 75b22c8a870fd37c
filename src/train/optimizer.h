// AdamW over a whole parameter arena (moments laid out like the weights), with clipping by
// the global gradient norm. Weight decay applies to matrices only (ParamInfo::decay):
// embeddings, projections and the LM head decay; norm gains and lambda vectors do not.
#pragma once
#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "model/parameters.h"

namespace difftx {

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  double grad_clip = 1.0;  // clip the global gradient norm to this; <= 0 disables clipping
};

class AdamW {
 public:
  AdamW(const ParameterTable& table, const AdamWConfig& config);

  // The global L2 norm of a gradient arena (check it is finite before stepping).
  double gradient_norm(const float* grads) const;
  // One update at learning rate lr, clipping by grad_norm (from gradient_norm).
  void step(float* weights, const float* grads, double lr, double grad_norm);

  int64_t steps_taken() const { return step_; }
  void set_steps_taken(int64_t s) { step_ = s; }
  Buffer<float>& first_moment() { return m_; }
  Buffer<float>& second_moment() { return v_; }
  const AdamWConfig& config() const { return config_; }

 private:
  struct Chunk {
    int64_t offset, numel;
    bool decay;
  };
  const ParameterTable& table_;
  AdamWConfig config_;
  std::vector<Chunk> chunks_;
  Buffer<float> m_, v_;
  int64_t step_ = 0;
};

}  // namespace difftx
