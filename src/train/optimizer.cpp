#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "kernels/ops.h"

namespace difftx::train {
namespace {

constexpr int64_t kChunk = int64_t{1} << 14;  // floats of one tensor per work item of a step

int64_t floats_in(const std::vector<ArenaPiece>& pieces) {
  int64_t n = 0;
  for (const ArenaPiece& p : pieces) n += p.end - p.begin;
  return n;
}

}  // namespace

AdamW::AdamW(backends::Backend& backend, const model::ParameterTable& table, const AdamWConfig& config,
             std::vector<ArenaPiece> pieces)
    : backend_(backend),
      table_(table),
      config_(config),
      pieces_(pieces.empty() ? std::vector<ArenaPiece>{{0, table.total_floats()}} : std::move(pieces)),
      shard_floats_(floats_in(pieces_)),
      m_(backend.allocate(shard_floats_ * int64_t{sizeof(float)})),
      v_(backend.allocate(shard_floats_ * int64_t{sizeof(float)})) {
  // Every owned run of a tensor (piece x tensor), cut into chunks of at most kChunk floats.
  int64_t shard_offset = 0;  // of the current piece in the shard
  for (const ArenaPiece& piece : pieces_) {
    for (const model::ParamInfo& p : table_.params()) {
      const int64_t begin = std::max(piece.begin, p.offset), end = std::min(piece.end, p.offset + p.numel);
      for (int64_t at = begin; at < end; at += kChunk)
        chunks_.push_back({at, shard_offset + (at - piece.begin), std::min(kChunk, end - at), p.decay});
    }
    shard_offset += piece.end - piece.begin;
  }
}

double AdamW::gradient_sum_of_squares(backends::DevicePtr<const float> grads) const {
  // Padding between and after tensors is zero in gradients, so one pass covers every tensor.
  return backend_.sum_of_squares(grads, shard_floats_);
}

double AdamW::gradient_norm(backends::DevicePtr<const float> grads) const {
  return std::sqrt(gradient_sum_of_squares(grads));
}

void AdamW::step(backends::DevicePtr<float> weights, backends::DevicePtr<const float> grads, double lr, double norm) {
  float scale = 1.0f;
  if (config_.grad_clip > 0 && norm > config_.grad_clip) scale = static_cast<float>(config_.grad_clip / norm);
  ++step_;
  // The kernel's checks, once here: nothing may throw inside the parallel region below.
  kernels::check_adamw_params(kernels::AdamWParams{static_cast<float>(lr), static_cast<float>(config_.beta1),
                                                   static_cast<float>(config_.beta2), static_cast<float>(config_.eps),
                                                   static_cast<float>(config_.weight_decay), step_});
  // One parallel region over chunks of every owned tensor run (the update is elementwise, so the
  // result is the same as tensor by tensor); adamw_update runs each chunk on its thread (training
  // runs on the CPU backend, whose ops may be issued from OpenMP threads).
  const int64_t n = static_cast<int64_t>(chunks_.size());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const Chunk& c = chunks_[i];
    const kernels::AdamWParams hp{static_cast<float>(lr), static_cast<float>(config_.beta1),
                                  static_cast<float>(config_.beta2), static_cast<float>(config_.eps),
                                  c.decay ? static_cast<float>(config_.weight_decay) : 0.0f, step_};
    backend_.adamw_update(weights + c.weight, grads + c.shard, first_moment() + c.shard, second_moment() + c.shard,
                          c.numel, hp, scale);
  }
}

}  // namespace difftx::train
