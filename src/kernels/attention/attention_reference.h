// The reference twin of the fused attention kernels in double precision, for tests only: the
// same contract as attention_forward_reference / attention_backward_reference in attention.h
// (which convert to double and call these), so that gradients can be checked by finite
// differences without float rounding.
#pragma once
#include "kernels/attention/attention.h"

namespace difftx {

void attention_forward_reference(const AttentionDims& dims, const double* q, const double* k,
                                 const double* v, const double* lambda, double* out);
void attention_backward_reference(const AttentionDims& dims, const double* q, const double* k,
                                  const double* v, const double* lambda, const double* dout,
                                  double* dq, double* dk, double* dv, double* dlambda);

// The forward with absmax fake-quantized logits (attention_quantized.h); bits = 0 is the plain one.
void attention_forward_quantized_reference(const AttentionDims& dims, const double* q, const double* k,
                                           const double* v, const double* lambda, double* out, int bits);

// Floats in the lambda argument: 0 (baseline), 1 (diff) or B*T*H (diff2).
int64_t attention_lambda_floats(const AttentionDims& dims);

}  // namespace difftx
