// Reference twins of the fused ops in ops.h, for tests: the plainest loops, in double
// throughout, so that their gradients can be checked by finite differences in double and the
// fast kernels compared against them. Same contracts as ops.h (backward functions accumulate
// into parameter gradients and overwrite input gradients), except that RoPE takes theta and
// computes its angles directly instead of reading a table.
#pragma once
#include <cstdint>

#include "kernels/ops.h"

namespace difftx::reference {

void rmsnorm_forward(const double* x, const double* g, double* y, double* rstd, int64_t rows,
                     int64_t n, double eps);
void rmsnorm_backward(const double* x, const double* g, const double* rstd, const double* dy,
                      double* dx, double* dg, int64_t rows, int64_t n);

void rope_forward(kernels::RopeStyle style, double* x, int64_t B, int64_t T, int64_t heads, int64_t d,
                  int64_t pos0, double theta);
void rope_backward(kernels::RopeStyle style, double* dx, int64_t B, int64_t T, int64_t heads, int64_t d,
                   int64_t pos0, double theta);

void swiglu_forward(const double* g, const double* u, double* h, int64_t n);
void swiglu_backward(const double* g, const double* u, const double* dh, double* dg, double* du,
                     int64_t n);

double cross_entropy_forward_backward(const double* logits, const int32_t* targets, double* dlogits,
                                      int64_t rows, int64_t V, int32_t ignore_id,
                                      int64_t* count_out);
double cross_entropy_sum(const double* logits, const int32_t* targets, int64_t rows, int64_t V,
                         int32_t ignore_id, int64_t* count_out);

void embedding_forward(const double* table, const int32_t* ids, double* y, int64_t rows, int64_t n,
                       int64_t V);
void embedding_backward(const int32_t* ids, const double* dy, double* dtable, int64_t rows,
                        int64_t n);

void adamw_update(double* p, const double* g, double* m, double* v, int64_t n,
                  const kernels::AdamWParams& hp, double grad_scale);

double sum_of_squares(const double* x, int64_t n);

}  // namespace difftx::reference
