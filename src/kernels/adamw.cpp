// AdamW (decoupled weight decay) over one tensor, as stated in ops.h.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/isa.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace difftx::DIFFTX_ISA {
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
  // GCC does not vectorise std::sqrt without -fno-math-errno, hence the intrinsics; the
  // scalar loop (the tail, and the whole tensor without AVX-512 or AVX2) computes the same formula.
#pragma omp parallel for schedule(static) if (worth_parallel(n))
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    int64_t i = begin;
#ifdef __AVX512F__
    const __m512 vb1 = _mm512_set1_ps(b1), vb2 = _mm512_set1_ps(b2), va1 = _mm512_set1_ps(a1),
                 va2 = _mm512_set1_ps(a2), vscale = _mm512_set1_ps(grad_scale),
                 vbc1 = _mm512_set1_ps(inv_bc1), vbc2 = _mm512_set1_ps(inv_sqrt_bc2),
                 vlr = _mm512_set1_ps(lr), veps = _mm512_set1_ps(eps), vwd = _mm512_set1_ps(wd);
    for (; i + 16 <= end; i += 16) {
      const __m512 gi = _mm512_mul_ps(_mm512_loadu_ps(g + i), vscale);
      const __m512 mi =
          _mm512_add_ps(_mm512_mul_ps(vb1, _mm512_loadu_ps(m + i)), _mm512_mul_ps(va1, gi));
      const __m512 vi = _mm512_add_ps(_mm512_mul_ps(vb2, _mm512_loadu_ps(v + i)),
                                      _mm512_mul_ps(_mm512_mul_ps(va2, gi), gi));
      _mm512_storeu_ps(m + i, mi);
      _mm512_storeu_ps(v + i, vi);
      const __m512 denom =
          _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_sqrt_ps(0xFFFF, vi), vbc2), veps);
      const __m512 pi = _mm512_loadu_ps(p + i);
      const __m512 step =
          _mm512_add_ps(_mm512_div_ps(_mm512_mul_ps(mi, vbc1), denom), _mm512_mul_ps(vwd, pi));
      _mm512_storeu_ps(p + i, _mm512_sub_ps(pi, _mm512_mul_ps(vlr, step)));
    }
#elif defined(__AVX2__)
    const __m256 vb1 = _mm256_set1_ps(b1), vb2 = _mm256_set1_ps(b2), va1 = _mm256_set1_ps(a1),
                 va2 = _mm256_set1_ps(a2), vscale = _mm256_set1_ps(grad_scale),
                 vbc1 = _mm256_set1_ps(inv_bc1), vbc2 = _mm256_set1_ps(inv_sqrt_bc2),
                 vlr = _mm256_set1_ps(lr), veps = _mm256_set1_ps(eps), vwd = _mm256_set1_ps(wd);
    for (; i + 8 <= end; i += 8) {
      const __m256 gi = _mm256_mul_ps(_mm256_loadu_ps(g + i), vscale);
      const __m256 mi =
          _mm256_add_ps(_mm256_mul_ps(vb1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(va1, gi));
      const __m256 vi = _mm256_add_ps(_mm256_mul_ps(vb2, _mm256_loadu_ps(v + i)),
                                      _mm256_mul_ps(_mm256_mul_ps(va2, gi), gi));
      _mm256_storeu_ps(m + i, mi);
      _mm256_storeu_ps(v + i, vi);
      const __m256 denom = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(vi), vbc2), veps);
      const __m256 pi = _mm256_loadu_ps(p + i);
      const __m256 step =
          _mm256_add_ps(_mm256_div_ps(_mm256_mul_ps(mi, vbc1), denom), _mm256_mul_ps(vwd, pi));
      _mm256_storeu_ps(p + i, _mm256_sub_ps(pi, _mm256_mul_ps(vlr, step)));
    }
#endif
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

}  // namespace difftx::DIFFTX_ISA
