// Opt-in wall-clock breakdown of a training step by phase (for `difftx bench train --profile`).
// The decoder laps a PhaseClock after each block of a layer; with no profile attached (the
// default) a lap does nothing.
#pragma once
#include <array>
#include <chrono>

namespace difftx::model {

enum class StepPhase {
  embedding,           // lookup and its gradient
  attention_forward,   // the attention blocks (layer.h): norm, projections, RoPE, attention, head norm, o_proj
  mlp_forward,         // the MLP blocks: norm, gate, up, SwiGLU, down
  final_norm,          // the final RMSNorm, forward and backward
  lm_head_xent,        // the LM head GEMMs with the fused cross-entropy
  mlp_backward,
  attention_backward,
  optimizer,           // gradient zeroing, global norm and AdamW (timed by the caller)
  count
};

const char* step_phase_name(StepPhase phase);

struct StepProfile {
  std::array<double, static_cast<int>(StepPhase::count)> seconds{};

  double& operator[](StepPhase p) { return seconds[static_cast<int>(p)]; }
  double total() const;
  void clear() { seconds.fill(0.0); }
};

// Attributes the time since the previous lap (or construction) to the phase named.
class PhaseClock {
 public:
  explicit PhaseClock(StepProfile* profile) : profile_(profile) {
    if (profile_) last_ = std::chrono::steady_clock::now();
  }
  void lap(StepPhase phase) {
    if (!profile_) return;
    const auto now = std::chrono::steady_clock::now();
    (*profile_)[phase] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  StepProfile* profile_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace difftx::model
