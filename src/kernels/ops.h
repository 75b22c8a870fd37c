// The fused elementwise and row-wise ops of the decoder (docs/SPEC.md §1), each a forward/backward
// pair over plain float buffers, row-major. Backward functions ACCUMULATE (+=) into parameter
// gradients (gains, embedding table) and OVERWRITE input gradients (dx), unless noted.
// Gradients summed over rows (gains, embedding table) come out bitwise the same for any thread
// count. No call allocates. Every op has a reference twin in tests/reference (in double).
//
// The kernels of one CPU level live in difftx::kernels::isa_<level> (kernels/isa.h); code outside the
// levels reaches them through a backend (backends/backend.h), never directly.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace difftx::kernels {

// RoPE (docs/SPEC.md §1) rotates x [B, T, heads, d] (row stride heads*d per token) in place.
// Position of token t is pos0 + t. interleaved: pairs (2i, 2i+1); half: pairs (i, i + d/2).
// Frequencies theta^(-2i/d), i in [0, d/2). Backward = rotation by the negative angle.
enum class RopeStyle { interleaved, half };
struct RopeTable {
  // cos/sin [max_T, d/2], built once per (max_T, d, theta).
  int64_t max_T = 0, d = 0;
  float* cos = nullptr;
  float* sin = nullptr;
};
// Frequency scaling for contexts beyond the trained one (docs/MODEL.md "RoPE scaling"):
//   none:   inv_freq_i = theta^(-2i/d)
//   linear: inv_freq_i / factor (positions divided by the factor)
//   llama3: pairs whose wavelength 2 pi / inv_freq is longer than original / low_freq_factor are
//           divided by factor, shorter than original / high_freq_factor kept, and the band between
//           blended linearly in original / wavelength.
enum class RopeScalingType { none, linear, llama3 };
struct RopeScaling {
  RopeScalingType type = RopeScalingType::none;
  double factor = 1.0;
  double low_freq_factor = 1.0;            // llama3 only
  double high_freq_factor = 4.0;           // llama3 only
  double original_max_position = 8192.0;   // llama3 only: the context the model was trained at
};
// Floats of a RopeTable's storage, cos and sin together.
inline int64_t rope_table_floats(int64_t max_T, int64_t d) { return max_T * d; }

// AdamW (decoupled weight decay), one tensor of n values, step t >= 1:
//   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//   p -= lr * ( m/(1-b1^t) / (sqrt(v/(1-b2^t)) + eps) + wd * p )
struct AdamWParams {
  float lr, beta1, beta2, eps, weight_decay;
  int64_t step;  // t, 1-based
};
// Throws unless t >= 1, the betas (as floats) lie in [0, 1), and lr, eps and weight_decay are
// finite and not negative. Callers that run adamw_update inside a parallel region call this
// first: nothing may throw out of an OpenMP region.
void check_adamw_params(const AdamWParams& hp);

// ---- Embedding: y[t] = table[ids[t]]; backward accumulates rows into dtable (one copy for
// every level: they copy and add rows). Ids must be in [0, V): out-of-range ids throw
// difftx::Error naming the position.
void embedding_forward(const float* table, const int32_t* ids, float* y, int64_t rows, int64_t n, int64_t V);
// The backward has no V to check against: pass the ids embedding_forward accepted.
void embedding_backward(const int32_t* ids, const float* dy, float* dtable, int64_t rows, int64_t n);

namespace DIFFTX_ISA {

// ---- RMSNorm (docs/SPEC.md §1): y = x / sqrt(mean(x^2) + eps) * g, per row of width n.
// rstd [rows] is saved for the backward pass. The DIFF V1 headwise norm (docs/SPEC.md §2.2) is this op
// with rows = B*T*H, n = 2d and the one gain shared by all heads.
void rmsnorm_forward(const float* x, const float* g, float* y, float* rstd, int64_t rows, int64_t n, float eps);
// dx overwritten; dg accumulated. x, g, rstd as in the forward.
void rmsnorm_backward(const float* x, const float* g, const float* rstd, const float* dy, float* dx, float* dg,
                      int64_t rows, int64_t n);

// ---- RoPE: inv_freq of pair i of a head of width d, in double; the table (storage holds
// rope_table_floats(max_T, d) floats); the rotations.
double rope_inverse_frequency(int64_t i, int64_t d, double theta, const RopeScaling& scaling);
RopeTable rope_table_build(float* storage, int64_t max_T, int64_t d, double theta, const RopeScaling& scaling);
void rope_forward(const RopeTable& table, RopeStyle style, float* x, int64_t B, int64_t T, int64_t heads,
                  int64_t pos0);
void rope_backward(const RopeTable& table, RopeStyle style, float* dx, int64_t B, int64_t T, int64_t heads,
                   int64_t pos0);

// ---- SwiGLU gate (docs/SPEC.md §1): h = silu(g) * u, elementwise over n values.
void swiglu_forward(const float* g, const float* u, float* h, int64_t n);
// dg, du overwritten.
void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n);

// ---- Softmax cross-entropy over logits [rows, V] with targets [rows]; a target equal to
// ignore_id does not count. Returns the mean loss over counted rows (0 if none), writes
// dlogits = d(mean loss)/d(logits) (zero rows for ignored targets; dlogits may alias logits),
// and stores the number of counted rows in *count_out. Targets outside [0, V) other than
// ignore_id throw difftx::Error naming the row.
double cross_entropy_forward_backward(const float* logits, const int32_t* targets, float* dlogits, int64_t rows,
                                      int64_t V, int32_t ignore_id, int64_t* count_out);
// Loss only (evaluation): sum of per-row losses over counted rows, and the count.
double cross_entropy_sum(const float* logits, const int32_t* targets, int64_t rows, int64_t V, int32_t ignore_id,
                         int64_t* count_out);

// ---- AdamW over one tensor (AdamWParams above).
void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWParams& hp,
                  float grad_scale /* multiplies g, e.g. a clipping factor */);

// ---- Sum of squares (for the global gradient norm), accumulated in double.
double sum_of_squares(const float* x, int64_t n);

}  // namespace DIFFTX_ISA
}  // namespace difftx::kernels
