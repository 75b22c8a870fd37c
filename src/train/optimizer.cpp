#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "kernels/ops.h"

namespace difftx {

namespace {
constexpr int64_t kChunk = int64_t{1} << 14;  // floats of one tensor per work item of a step
}  // namespace

AdamW::AdamW(const ParameterTable& table, const AdamWConfig& config)
    : table_(table), config_(config), m_(table.total_floats()), v_(table.total_floats()) {
  for (const ParamInfo& p : table_.params())
    for (int64_t begin = 0; begin < p.numel; begin += kChunk)
      chunks_.push_back({p.offset + begin, std::min(kChunk, p.numel - begin), p.decay});
}

double AdamW::gradient_norm(const float* grads) const {
  // Padding between tensors is zero in the gradient arena, so one pass covers every tensor.
  return std::sqrt(sum_of_squares(grads, table_.total_floats()));
}

void AdamW::step(float* weights, const float* grads, double lr, double norm) {
  float scale = 1.0f;
  if (config_.grad_clip > 0 && norm > config_.grad_clip) scale = static_cast<float>(config_.grad_clip / norm);
  ++step_;
  // One parallel region over chunks of every tensor (the update is elementwise, so the result
  // is the same as tensor by tensor); adamw_update runs each chunk on its thread.
  const int64_t n = static_cast<int64_t>(chunks_.size());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const Chunk& c = chunks_[i];
    const AdamWParams hp{static_cast<float>(lr), static_cast<float>(config_.beta1), static_cast<float>(config_.beta2),
                         static_cast<float>(config_.eps), c.decay ? static_cast<float>(config_.weight_decay) : 0.0f,
                         step_};
    adamw_update(weights + c.offset, grads + c.offset, m_.data() + c.offset, v_.data() + c.offset, c.numel, hp, scale);
  }
}

}  // namespace difftx
