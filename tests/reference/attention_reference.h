// The reference twin of the fused attention kernels (kernels/attention/attention.h): every T x T
// map materialised, all arithmetic in double. The double forms serve finite-difference checks of
// the gradients; the float forms convert and call them.
#pragma once
#include "kernels/attention/attention.h"

namespace difftx {

void attention_forward_reference(const kernels::AttentionDims& dims, const double* q, const double* k,
                                 const double* v, const double* lambda, double* out);
void attention_backward_reference(const kernels::AttentionDims& dims, const double* q, const double* k,
                                  const double* v, const double* lambda, const double* dout,
                                  double* dq, double* dk, double* dv, double* dlambda);

// The forward with absmax fake-quantized logits (attention_quantized.h); bits = 0 is the plain one.
void attention_forward_quantized_reference(const kernels::AttentionDims& dims, const double* q, const double* k,
                                           const double* v, const double* lambda, double* out, int bits);

// Floats in the lambda argument: 0 (baseline), 1 (diff) or B*T*H (diff2).
int64_t attention_lambda_floats(const kernels::AttentionDims& dims);

// Same contract as the fused pair (nothing saved).
void attention_forward_reference(const kernels::AttentionDims& dims, const float* q, const float* k,
                                 const float* v, const float* lambda, float* out);
void attention_backward_reference(const kernels::AttentionDims& dims, const float* q, const float* k,
                                  const float* v, const float* lambda, const float* dout, float* dq,
                                  float* dk, float* dv, float* dlambda);

// The fake-quantized forward (attention_quantized.h) in double, every map materialised.
void attention_forward_quantized_reference(const kernels::AttentionDims& dims, const float* q, const float* k,
                                           const float* v, const float* lambda, float* out, int bits);

}  // namespace difftx
