// The SwiGLU gate (docs/SPEC.md §1): h = silu(g) * u with silu(g) = g * sigmoid(g).
#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/vector_math.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {

void swiglu_forward(const float* g, const float* u, float* h, int64_t n) {
  DIFFTX_CHECK(n >= 0, "swiglu_forward: n must be >= 0, got ", n);
#pragma omp parallel for simd schedule(static) if (worth_parallel(n))
  for (int64_t i = 0; i < n; ++i) h[i] = g[i] * sigmoid_approx(g[i]) * u[i];
}

// With s = sigmoid(g): dh/du = g s, dh/dg = u s (1 + g (1 - s)).
void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du,
                     int64_t n) {
  DIFFTX_CHECK(n >= 0, "swiglu_backward: n must be >= 0, got ", n);
#pragma omp parallel for simd schedule(static) if (worth_parallel(n))
  for (int64_t i = 0; i < n; ++i) {
    const float s = sigmoid_approx(g[i]);
    du[i] = dh[i] * g[i] * s;
    dg[i] = dh[i] * u[i] * s * (1.0f + g[i] * (1.0f - s));
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA
