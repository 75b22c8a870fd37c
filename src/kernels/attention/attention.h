// Causal attention for every variant of docs/SPEC.md §2, forward and backward.
//
// Layouts are token-major, exactly as the projections produce them (row = one token):
//   q     [B, T, q_width]    k [B, T, k_width]    v [B, T, v_width]    out [B, T, out_width]
// with the widths of docs/SPEC.md §2 for each variant (AttentionVariant, variant.h).
//
// lambda:
//   baseline: unused (may be null).
//   diff, diff_grouped: one float, the layer's lambda of Eq. 2 (the model computes it from lq1..lk2).
//   diff2:    [B, T, H] logits; the kernel applies sigmoid (docs/SPEC.md §2.3).
// dlambda (backward) has the same shape: a scalar for diff and diff_grouped (d loss / d lambda), [B, T, H] for
// diff2 (d loss / d logits). Backward OVERWRITES dq, dk, dv and dlambda.
//
// The V1 headwise RMSNorm and (1 - lambda_init) factor are NOT part of this op (model layer).
#pragma once
#include <cstdint>

#include "kernels/attention/variant.h"
#include "kernels/isa.h"

namespace difftx::kernels {

// A batch of sequences for one variant: the variant's shape plus B and T.
struct AttentionDims {
  AttentionKind kind;
  int64_t B;    // batch
  int64_t T;    // sequence length
  int64_t H;    // heads as docs/SPEC.md defines them per variant (diff: differential heads; diff2: output heads)
  int64_t Hkv;  // key/value heads; H % Hkv == 0
  int64_t d;    // head dimension of one softmax map
  int64_t r = 1;  // diff_grouped: signal maps per noise map (AttentionVariant::r)
  // > 0: sliding-window attention, query t sees keys [t - window + 1, t] (itself and the
  // window - 1 before it); 0: every key up to t. The forward kernels and the references take it;
  // the fused backward and the fake-quantized kernel refuse it.
  int64_t window = 0;

  AttentionVariant variant() const { return {kind, H, Hkv, d, r}; }
  int64_t q_width() const { return variant().q_width(); }
  int64_t k_width() const { return variant().k_width(); }
  int64_t v_width() const { return variant().v_width(); }
  int64_t out_width() const { return variant().out_width(); }
  void validate() const;  // throws difftx::Error naming the bad field
};

// What the forward pass keeps for the backward pass. Sizes from attention_saved_floats().
// The caller owns the memory (plan it once per (B, T)); the kernels fill it.
struct AttentionSaved {
  float* lse;       // per-row log-sum-exp of every softmax map, [B, maps, T]
  float* maps_out;  // per-map outputs before the pair subtraction (paired variants), [B, T, maps, dv]
                    // (dv = 2d for diff and diff_grouped, d for diff2); null for baseline
};
int64_t attention_lse_floats(const AttentionDims& dims);
int64_t attention_maps_out_floats(const AttentionDims& dims);  // 0 for baseline

// The fused kernel of a CPU level: flash-style, O(T) memory, multithreaded, AVX-512 where it
// pays (see flash.h). Scratch memory is one grow-only block per calling thread, reused across
// calls. Results are deterministic for a given thread count.
namespace DIFFTX_ISA {
void attention_forward(const AttentionDims& dims, const float* q, const float* k, const float* v,
                       const float* lambda, float* out, AttentionSaved saved);
void attention_backward(const AttentionDims& dims, const float* q, const float* k, const float* v,
                        const float* lambda, const float* out, AttentionSaved saved,
                        const float* dout, float* dq, float* dk, float* dv, float* dlambda);
}  // namespace DIFFTX_ISA
}  // namespace difftx::kernels
