// Causal attention whose logits are absmax fake-quantized before the softmax: the paper's
// post-training quantization of attention logits (§3.7, Figure 8). Evaluation only: no
// backward, nothing saved, one T x T map per thread materialised (meant for T <= 2048; T > 8192
// is refused).
//
// Granularity: one absmax per (batch row, softmax map) over that map's unmasked logits, i.e.
// each head's logit matrix of one sequence is one tensor, as a per-tensor absmax quantizer
// sees it. A single outlier logit anywhere in the map sets the step for all of it, which is
// how outliers cost precision; a per-row scale would hide that. Every softmax map is
// quantized on its own (both maps of a diff head, all 2H query heads of diff2).
//
// The quantizer is symmetric with 2^(bits-1) - 1 levels per sign (int8: +-127), rounding half
// to even. It acts on the raw products q . k and the result is then scaled by 1/sqrt(d): absmax
// quantization commutes with a positive scale, so this equals quantizing the logits, and
// inputs whose products are exact in float give the fused kernel and its reference identical
// levels (the tests rely on that; rounding is discontinuous, tolerances cannot cover it).
// bits = 0 means no quantization: plain attention.
#pragma once
#include <cmath>

#include "kernels/attention/attention.h"

namespace difftx::kernels {

// Throws unless bits is 0 or in [2, 16].
void check_logit_bits(int bits);

// x -> round(x / step) * step, step = absmax / (2^(bits-1) - 1); the identity for bits = 0 or
// absmax = 0, NaN for a non-finite absmax. In double, shared by the fused kernel and the
// reference so that their levels agree. Throws only for bits out of range.
class AbsmaxQuantizer {
 public:
  AbsmaxQuantizer(double absmax, int bits);
  double operator()(double x) const { return active_ ? std::nearbyint(x * to_level_) * step_ : x; }
  double step() const { return step_; }
  bool active() const { return active_; }  // false: the identity

 private:
  bool active_;
  double to_level_ = 0, step_ = 0;
};

// Same contract as attention_forward (attention.h) but without AttentionSaved.
void attention_forward_quantized(const AttentionDims& dims, const float* q, const float* k, const float* v,
                                 const float* lambda, float* out, int bits);
}  // namespace difftx::kernels
