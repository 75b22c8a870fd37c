// The SwiGLU gate (SPEC §1): h = silu(g) * u with silu(g) = g * sigmoid(g).
#include <algorithm>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/vector_math.h"

namespace difftx {

void swiglu_forward(const float* g, const float* u, float* h, int64_t n) {
  DIFFTX_CHECK(n >= 0, "swiglu_forward: n must be >= 0, got ", n);
#pragma omp parallel for schedule(static) if (worth_parallel(n))
  for (int64_t begin = 0; begin < n; begin += kElementwiseChunk) {
    const int64_t end = std::min(n, begin + kElementwiseChunk);
    int64_t i = begin;
#ifdef __AVX512F__
    for (; i + 16 <= end; i += 16) {
      const __m512 gi = _mm512_loadu_ps(g + i);
      const __m512 silu = _mm512_mul_ps(gi, sigmoid_avx512(gi));
      _mm512_storeu_ps(h + i, _mm512_mul_ps(silu, _mm512_loadu_ps(u + i)));
    }
#endif
#pragma omp simd
    for (int64_t j = i; j < end; ++j) h[j] = g[j] * sigmoid_approx(g[j]) * u[j];
  }
}

// With s = sigmoid(g): dh/du = g s, dh/dg = u s (1 + g (1 - s)).
void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du,
                     int64_t n) {
  DIFFTX_CHECK(n >= 0, "swiglu_backward: n must be >= 0, got ", n);
#pragma omp parallel for schedule(static) if (worth_parallel(n))
  for (int64_t begin = 0; begin < n; begin += kElementwiseChunk) {
    const int64_t end = std::min(n, begin + kElementwiseChunk);
    int64_t i = begin;
#ifdef __AVX512F__
    const __m512 one = _mm512_set1_ps(1.0f);
    for (; i + 16 <= end; i += 16) {
      const __m512 gi = _mm512_loadu_ps(g + i), dhi = _mm512_loadu_ps(dh + i);
      const __m512 s = sigmoid_avx512(gi);
      _mm512_storeu_ps(du + i, _mm512_mul_ps(_mm512_mul_ps(dhi, gi), s));
      const __m512 slope = _mm512_fmadd_ps(gi, _mm512_sub_ps(one, s), one);  // 1 + g (1 - s)
      const __m512 dhus = _mm512_mul_ps(_mm512_mul_ps(dhi, _mm512_loadu_ps(u + i)), s);
      _mm512_storeu_ps(dg + i, _mm512_mul_ps(dhus, slope));
    }
#endif
#pragma omp simd
    for (int64_t j = i; j < end; ++j) {
      const float s = sigmoid_approx(g[j]);
      du[j] = dh[j] * g[j] * s;
      dg[j] = dh[j] * u[j] * s * (1.0f + g[j] * (1.0f - s));
    }
  }
}

}  // namespace difftx
