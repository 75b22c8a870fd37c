// The PolyNorm gate of Motif's MLP (docs/SPEC.md §1.1): over the F values z of a gate row,
//   PolyNorm(z) = w0 z^3 / rho(z^3) + w1 z^2 / rho(z^2) + w2 z / rho(z) + b,
//   rho(u) = sqrt(mean(u^2) + eps) over the row,
// and h = PolyNorm(g) * u, the place of silu(g) * u in SwiGLU. w [3] and b [1] are learned per layer.
#pragma once
#include <cstdint>

namespace difftx::kernels {

constexpr double kPolyNormEps = 1e-6;  // Motif's rho epsilon

// g, u, h: [rows, F]. h overwritten.
void polynorm_glu_forward(const float* g, const float* u, const float* w, const float* b, float* h, int64_t rows,
                          int64_t F);
// dg, du overwritten; dw [3] and db [1] accumulated (the sum over rows in row order, so the result
// does not depend on the thread count). The row statistics are recomputed from g.
void polynorm_glu_backward(const float* g, const float* u, const float* w, const float* b, const float* dh, float* dg,
                           float* du, float* dw, float* db, int64_t rows, int64_t F);

}  // namespace difftx::kernels
