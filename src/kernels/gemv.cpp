#include "kernels/gemv.h"

#include "core/error.h"
#include "kernels/op_threading.h"

namespace difftx {
namespace {

constexpr int64_t kRows = 4;  // rows per step: each load of x feeds four FMAs

// y[r] (+)= W[r] . x for r in [r0, r0 + kRows).
inline void four_rows(const float* W, const float* x, float* y, int64_t r0, int64_t in, bool accumulate) {
  const float* w0 = W + r0 * in;
  const float* w1 = w0 + in;
  const float* w2 = w1 + in;
  const float* w3 = w2 + in;
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int64_t i = 0; i < in; ++i) {
    s0 += w0[i] * x[i];
    s1 += w1[i] * x[i];
    s2 += w2[i] * x[i];
    s3 += w3[i] * x[i];
  }
  float* yr = y + r0;
  if (accumulate) {
    yr[0] += s0, yr[1] += s1, yr[2] += s2, yr[3] += s3;
  } else {
    yr[0] = s0, yr[1] = s1, yr[2] = s2, yr[3] = s3;
  }
}

inline void one_row(const float* W, const float* x, float* y, int64_t r, int64_t in, bool accumulate) {
  const float* w = W + r * in;
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < in; ++i) s += w[i] * x[i];
  y[r] = accumulate ? y[r] + s : s;
}

}  // namespace

void gemv(const float* W, const float* x, float* y, int64_t out, int64_t in, bool accumulate) {
  DIFFTX_CHECK(out >= 0 && in >= 0, "gemv: negative size out=", out, " in=", in);
  DIFFTX_CHECK(out == 0 || (W && x && y), "gemv: W, x and y must not be null");
  const int64_t blocks = out / kRows;
#pragma omp parallel for schedule(static) if (worth_parallel(out * in))
  for (int64_t b = 0; b < blocks; ++b) four_rows(W, x, y, b * kRows, in, accumulate);
  for (int64_t r = blocks * kRows; r < out; ++r) one_row(W, x, y, r, in, accumulate);
}

void gemv_reference(const float* W, const float* x, float* y, int64_t out, int64_t in, bool accumulate) {
  for (int64_t r = 0; r < out; ++r) {
    double s = 0;
    for (int64_t i = 0; i < in; ++i) s += static_cast<double>(W[r * in + i]) * x[i];
    y[r] = static_cast<float>(accumulate ? y[r] + s : s);
  }
}

}  // namespace difftx
