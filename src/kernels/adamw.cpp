// AdamW (decoupled weight decay) over one tensor, as stated in ops.h.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/isa.h"
#include "kernels/simd.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {
constexpr int64_t kChunk = 4096;  // values per OpenMP work item (16 KiB of each array)
}  // namespace

void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWParams& hp,
                  float grad_scale) {
  DIFFTX_CHECK(n >= 0, "adamw_update: n must be >= 0, got ", n);
  check_adamw_params(hp);
  // Bias corrections in double: 1 - beta^t loses digits in float for beta near 1.
  const double t = static_cast<double>(hp.step);
  const float inv_bc1 =
      static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(hp.beta1), t)));
  const float inv_sqrt_bc2 =
      static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(static_cast<double>(hp.beta2), t)));
  const float b1 = hp.beta1, b2 = hp.beta2, a1 = 1.0f - b1, a2 = 1.0f - b2;
  const float lr = hp.lr, eps = hp.eps, wd = hp.weight_decay;
  // GCC does not vectorise std::sqrt without -fno-math-errno, hence Highway; the vector loop and
  // the scalar one (the tail) compute the same formula, lane for lane, with no fused products.
#pragma omp parallel for schedule(static) if (worth_parallel(n))
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    int64_t i = begin;
    // (in the thread's own registers: set outside the region, they are read from memory)
    const FloatTag d;
    const FloatVec vb1 = hn::Set(d, b1), vb2 = hn::Set(d, b2), va1 = hn::Set(d, a1), va2 = hn::Set(d, a2),
                   vscale = hn::Set(d, grad_scale), vbc1 = hn::Set(d, inv_bc1), vbc2 = hn::Set(d, inv_sqrt_bc2),
                   vlr = hn::Set(d, lr), veps = hn::Set(d, eps), vwd = hn::Set(d, wd);
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    for (; i + lanes <= end; i += lanes) {
      const FloatVec gi = hn::Mul(hn::LoadU(d, g + i), vscale);
      const FloatVec mi = hn::Add(hn::Mul(vb1, hn::LoadU(d, m + i)), hn::Mul(va1, gi));
      const FloatVec vi = hn::Add(hn::Mul(vb2, hn::LoadU(d, v + i)), hn::Mul(hn::Mul(va2, gi), gi));
      hn::StoreU(mi, d, m + i);
      hn::StoreU(vi, d, v + i);
      const FloatVec denom = hn::Add(hn::Mul(hn::Sqrt(vi), vbc2), veps);
      const FloatVec pi = hn::LoadU(d, p + i);
      const FloatVec step = hn::Add(hn::Div(hn::Mul(mi, vbc1), denom), hn::Mul(vwd, pi));
      hn::StoreU(hn::Sub(pi, hn::Mul(vlr, step)), d, p + i);
    }
    for (; i < end; ++i) {
      const float gi = g[i] * grad_scale;
      const float mi = b1 * m[i] + a1 * gi;
      const float vi = b2 * v[i] + a2 * gi * gi;
      m[i] = mi;
      v[i] = vi;
      // sqrt(v / (1 - b2^t)) = sqrt(v) / sqrt(1 - b2^t)
      p[i] -= lr * (mi * inv_bc1 / (std::sqrt(vi) * inv_sqrt_bc2 + eps) + wd * p[i]);
    }
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA
