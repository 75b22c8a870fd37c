// The PolyNorm gate (kernels/polynorm.h) in double: the plainest loops, same contracts.
#pragma once
#include <cstdint>

namespace difftx::reference {

void polynorm_glu_forward(const double* g, const double* u, const double* w, const double* b, double* h, int64_t rows,
                          int64_t F);
void polynorm_glu_backward(const double* g, const double* u, const double* w, const double* b, const double* dh,
                           double* dg, double* du, double* dw, double* db, int64_t rows, int64_t F);

}  // namespace difftx::reference
