#include "train/optimizer.h"

#include <cmath>

#include "kernels/ops.h"

namespace difftx {

AdamW::AdamW(const ParameterTable& table, const AdamWConfig& config)
    : table_(table), config_(config), m_(table.total_floats()), v_(table.total_floats()) {}

double AdamW::gradient_norm(const float* grads) const {
  // Padding between tensors is zero in the gradient arena, so one pass covers every tensor.
  return std::sqrt(sum_of_squares(grads, table_.total_floats()));
}

void AdamW::step(float* weights, const float* grads, double lr, double norm) {
  float scale = 1.0f;
  if (config_.grad_clip > 0 && norm > config_.grad_clip) scale = static_cast<float>(config_.grad_clip / norm);
  ++step_;
  for (const ParamInfo& p : table_.params()) {
    const AdamWParams hp{static_cast<float>(lr), static_cast<float>(config_.beta1), static_cast<float>(config_.beta2),
                         static_cast<float>(config_.eps), p.decay ? static_cast<float>(config_.weight_decay) : 0.0f,
                         step_};
    adamw_update(weights + p.offset, grads + p.offset, m_.data() + p.offset, v_.data() + p.offset, p.numel, hp, scale);
  }
}

}  // namespace difftx
