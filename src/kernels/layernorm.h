// LayerNorm with a bias (Phi-4-mini-flash's norms, docs/MODEL.md "SambaY"), per row of width n:
//   y = (x - mean) * rstd * w + b,   rstd = 1 / sqrt(mean((x - mean)^2) + eps).
// mean [rows] and rstd [rows] are saved for the backward pass.
// The twins in double are tests/reference/layernorm_reference.h.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {

void layernorm_forward(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                       int64_t rows, int64_t n, float eps);
// With xhat = (x - mean) rstd and g = dy w: dx = rstd (g - mean(g) - xhat mean(g xhat)), overwritten;
// dw += dy xhat and db += dy accumulated over the rows in row order (bitwise the same for any
// thread count).
void layernorm_backward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy,
                        float* dx, float* dw, float* db, int64_t rows, int64_t n);

}  // namespace difftx::kernels::DIFFTX_ISA
