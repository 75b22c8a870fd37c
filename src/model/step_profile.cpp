#include "model/step_profile.h"

#include <numeric>

namespace difftx::model {

const char* step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::embedding: return "embedding";
    case StepPhase::attention_forward: return "attention_forward";
    case StepPhase::mlp_forward: return "mlp_forward";
    case StepPhase::final_norm: return "final_norm";
    case StepPhase::lm_head_xent: return "lm_head_xent";
    case StepPhase::mlp_backward: return "mlp_backward";
    case StepPhase::attention_backward: return "attention_backward";
    case StepPhase::optimizer: return "optimizer";
    case StepPhase::count: break;
  }
  return "?";
}

double StepProfile::total() const { return std::accumulate(seconds.begin(), seconds.end(), 0.0); }

}  // namespace difftx::model
