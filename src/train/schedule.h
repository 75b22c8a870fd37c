// Learning-rate schedule: linear warm-up, then cosine or linear decay to a floor.
#pragma once
#include <cstdint>
#include <string>

namespace difftx::train {

enum class DecayShape { cosine, linear, constant };
DecayShape decay_shape_from_name(const std::string& name);  // "cosine" | "linear" | "constant"

struct LrSchedule {
  double peak_lr;
  double min_lr;          // the floor reached at total_steps
  int64_t warmup_steps;   // lr rises linearly from peak/warmup to peak over these steps
  int64_t total_steps;
  DecayShape shape;

  // The learning rate of step s (1-based, as the optimizer counts).
  double at(int64_t step) const;
};

}  // namespace difftx::train
