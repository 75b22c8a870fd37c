#include "train/schedule.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace difftx::train {

DecayShape decay_shape_from_name(const std::string& name) {
  if (name == "cosine") return DecayShape::cosine;
  if (name == "linear") return DecayShape::linear;
  if (name == "constant") return DecayShape::constant;
  fail("unknown lr schedule '", name, "' (expected cosine, linear or constant)");
}

double LrSchedule::at(int64_t step) const {
  if (warmup_steps > 0 && step <= warmup_steps) return peak_lr * static_cast<double>(step) / warmup_steps;
  if (shape == DecayShape::constant || total_steps <= warmup_steps) return peak_lr;
  const double progress =
      std::clamp(static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps), 0.0, 1.0);
  const double fraction = shape == DecayShape::cosine ? 0.5 * (1.0 + std::cos(M_PI * progress)) : 1.0 - progress;
  return min_lr + (peak_lr - min_lr) * fraction;
}

}  // namespace difftx::train
