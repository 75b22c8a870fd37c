// Fused softmax cross-entropy over rows of logits (SPEC §1), numerically stable: every
// exponential is of (logit - row max), and loss = log-sum-exp - logit[target].
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/vector_math.h"

namespace difftx {
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
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < V; ++j) {
      const float e = exp_approx(x[j] - m);
      dx[j] = e;
      sum += e;
    }
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
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < V; ++j) sum += exp_approx(x[j] - m);
    loss += m + std::log(static_cast<double>(sum)) - x[targets[r]];
  }
  return loss;
}

}  // namespace difftx
