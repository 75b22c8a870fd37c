// The tutorial's differential attention (docs/SPEC.md §2.4, seed 004), a reference for analysis and
// teaching only: it is NOT what the DIFF Transformer trains.
//   A1 = softmax(q1 k1^T / sqrt(d)),  A2 = softmax(q2 k2^T / sqrt(d))
//   D  = max(A1 - lambda * A2, 0), each row renormalised to sum to 1 (an all-zero row stays zero)
//   out = D v
#pragma once
#include <cstdint>

namespace difftx {

// One head. q, k: [T, 2d], each row laid out [q1 | q2] (d = the half width); v: [T, dv];
// out: [T, dv]. causal applies the causal mask (the tutorial's worked example has none).
// Accumulates in double.
void diff_clamp_attention_reference(int64_t T, int64_t d, int64_t dv, const float* q, const float* k,
                                    const float* v, float lambda, bool causal, float* out);

}  // namespace difftx
