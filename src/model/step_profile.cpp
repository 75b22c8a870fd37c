#include "model/step_profile.h"

#include <numeric>

namespace difftx {

const char* step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::embedding: return "embedding";
    case StepPhase::rmsnorm: return "rmsnorm";
    case StepPhase::qkv_proj: return "qkv_proj";
    case StepPhase::rope: return "rope";
    case StepPhase::attention_fwd: return "attention_fwd";
    case StepPhase::attention_bwd: return "attention_bwd";
    case StepPhase::diff_extra: return "diff_extra";
    case StepPhase::o_proj: return "o_proj";
    case StepPhase::mlp_gemm: return "mlp_gemm";
    case StepPhase::swiglu: return "swiglu";
    case StepPhase::residual: return "residual";
    case StepPhase::lm_head_xent: return "lm_head_xent";
    case StepPhase::optimizer: return "optimizer";
    case StepPhase::count: break;
  }
  return "?";
}

double StepProfile::total() const { return std::accumulate(seconds.begin(), seconds.end(), 0.0); }

}  // namespace difftx
