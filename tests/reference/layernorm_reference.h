// LayerNorm with a bias (kernels/layernorm.h) in double: the plainest loops, same contracts.
#pragma once
#include <cstdint>

namespace difftx::reference {

void layernorm_forward(const double* x, const double* w, const double* b, double* y, double* mean, double* rstd,
                       int64_t rows, int64_t n, double eps);
void layernorm_backward(const double* x, const double* w, const double* mean, const double* rstd, const double* dy,
                        double* dx, double* dw, double* db, int64_t rows, int64_t n);

}  // namespace difftx::reference
