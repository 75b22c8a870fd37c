#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "kernels/ops.h"

namespace difftx {
namespace {

int64_t shard_floats(const std::vector<ArenaPiece>& pieces) {
  int64_t n = 0;
  for (const ArenaPiece& p : pieces) n += p.end - p.begin;
  return n;
}

}  // namespace

AdamW::AdamW(const ParameterTable& table, const AdamWConfig& config, std::vector<ArenaPiece> pieces)
    : table_(table),
      config_(config),
      pieces_(pieces.empty() ? std::vector<ArenaPiece>{{0, table.total_floats()}} : std::move(pieces)),
      m_(shard_floats(pieces_)),
      v_(m_.size()) {}

double AdamW::gradient_sum_of_squares(const float* grads) const {
  // Padding between and after tensors is zero in gradients, so one pass covers every tensor.
  return sum_of_squares(grads, m_.size());
}

double AdamW::gradient_norm(const float* grads) const { return std::sqrt(gradient_sum_of_squares(grads)); }

void AdamW::step(float* weights, const float* grads, double lr, double norm) {
  float scale = 1.0f;
  if (config_.grad_clip > 0 && norm > config_.grad_clip) scale = static_cast<float>(config_.grad_clip / norm);
  ++step_;
  int64_t shard_offset = 0;  // of the current piece in the shard
  for (const ArenaPiece& piece : pieces_) {
    for (const ParamInfo& p : table_.params()) {
      const int64_t begin = std::max(piece.begin, p.offset), end = std::min(piece.end, p.offset + p.numel);
      if (begin >= end) continue;
      const AdamWParams hp{static_cast<float>(lr), static_cast<float>(config_.beta1),
                           static_cast<float>(config_.beta2), static_cast<float>(config_.eps),
                           p.decay ? static_cast<float>(config_.weight_decay) : 0.0f, step_};
      const int64_t at = shard_offset + (begin - piece.begin);
      adamw_update(weights + begin, grads + at, m_.data() + at, v_.data() + at, end - begin, hp, scale);
    }
    shard_offset += piece.end - piece.begin;
  }
}

}  // namespace difftx
