// Fused softmax cross-entropy over rows of logits (docs/SPEC.md §1), numerically stable: every
// exponential is of (logit - row max), and loss = log-sum-exp - logit[target].
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/vector_math.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {

// Checks every target before any work (so a bad one leaves the outputs untouched) and returns
// the number of rows that count.
int64_t count_targets(const char* op, const int32_t* targets, int64_t rows, int64_t V,
                      int32_t ignore_id) {
  DIFFTX_CHECK(rows >= 0, op, ": rows must be >= 0, got ", rows);
  DIFFTX_CHECK(V > 0, op, ": vocabulary size V must be > 0, got ", V);
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t t = targets[r];
    if (t == ignore_id) continue;
    DIFFTX_CHECK(t >= 0 && t < V, op, ": target ", t, " at row ", r, " is outside [0, ", V,
                 ") and is not the ignore id ", ignore_id);
    ++count;
  }
  return count;
}

// sum_j e^(x_j - m) over one row; with kStore also writes each term to out (which may be x).
template <bool kStore>
float row_exp_sum(const float* x, float m, float* out, int64_t V) {
  int64_t j = 0;
  float sum = 0;
  // x86 AVX2 and AVX3 only: the other levels keep the portable loop below, and its bits.
#if DIFFTX_SIMD_FMA && HWY_ARCH_X86
  const FloatTag d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const FloatVec vm = hn::Set(d, m);
  FloatVec sum0 = hn::Zero(d), sum1 = hn::Zero(d);  // two chains hide add latency
  for (; j + 2 * n <= V; j += 2 * n) {
    const FloatVec e0 = exp_vec(hn::Sub(hn::LoadU(d, x + j), vm));
    const FloatVec e1 = exp_vec(hn::Sub(hn::LoadU(d, x + j + n), vm));
    if constexpr (kStore) {
      hn::StoreU(e0, d, out + j);
      hn::StoreU(e1, d, out + j + n);
    }
    sum0 = hn::Add(sum0, e0);
    sum1 = hn::Add(sum1, e1);
  }
  alignas(64) float lanes[hn::MaxLanes(d)];
  hn::Store(hn::Add(sum0, sum1), d, lanes);
  for (float lane : lanes) sum += lane;
#endif
#pragma omp simd reduction(+ : sum)
  for (int64_t i = j; i < V; ++i) {
    const float e = exp_approx(x[i] - m);
    if constexpr (kStore) out[i] = e;
    sum += e;
  }
  return sum;
}

inline float row_max(const float* x, int64_t V) {
  float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < V; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

}  // namespace

double cross_entropy_forward_backward(const float* logits, const int32_t* targets, float* dlogits,
                                      int64_t rows, int64_t V, int32_t ignore_id,
                                      int64_t* count_out) {
  const int64_t count =
      count_targets("cross_entropy_forward_backward", targets, rows, V, ignore_id);
  *count_out = count;
  const float inv_count = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
  double loss = 0;
#pragma omp parallel for schedule(static) reduction(+ : loss) if (worth_parallel(rows * V))
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits + r * V;
    float* dx = dlogits + r * V;  // may be x itself: each element is read before it is written
    const int32_t t = targets[r];
    if (t == ignore_id) {
      std::memset(dx, 0, V * sizeof(float));
      continue;
    }
    const float m = row_max(x, V);
    const float x_target = x[t];
    const float sum = row_exp_sum<true>(x, m, dx, V);
    loss += m + std::log(static_cast<double>(sum)) - x_target;
    // d(mean loss)/d(logit_j) = (softmax_j - [j == t]) / count.
    const float scale = inv_count / sum;
#pragma omp simd
    for (int64_t j = 0; j < V; ++j) dx[j] *= scale;
    dx[t] -= inv_count;
  }
  return count > 0 ? loss / count : 0.0;
}

double cross_entropy_sum(const float* logits, const int32_t* targets, int64_t rows, int64_t V,
                         int32_t ignore_id, int64_t* count_out) {
  *count_out = count_targets("cross_entropy_sum", targets, rows, V, ignore_id);
  double loss = 0;
#pragma omp parallel for schedule(static) reduction(+ : loss) if (worth_parallel(rows * V))
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_id) continue;
    const float* x = logits + r * V;
    const float m = row_max(x, V);
    const float sum = row_exp_sum<false>(x, m, nullptr, V);
    loss += m + std::log(static_cast<double>(sum)) - x[targets[r]];
  }
  return loss;
}

}  // namespace difftx::kernels::DIFFTX_ISA
