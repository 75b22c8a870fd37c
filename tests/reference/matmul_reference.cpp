#include "reference/matmul_reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"

namespace difftx::reference {
namespace {

// y (= or +=) x W^T with x already in double.
void product(const kernels::WeightMatrix& W, const double* x, float* y, int64_t N, bool accumulate) {
  DIFFTX_CHECK(W.data || N == 0 || W.rows == 0, "reference::matmul: the matrix is held only as weight panels");
  std::vector<float> row(W.cols);
  const int64_t row_bytes = kernels::weight_row_bytes(W.type, W.cols);
  for (int64_t r = 0; r < W.rows; ++r) {
    backends::cpu::kernels().dequantize_rows(W.type, static_cast<const uint8_t*>(W.data) + r * row_bytes, row.data(),
                                             1, W.cols);
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t i = 0; i < W.cols; ++i) s += static_cast<double>(row[i]) * x[n * W.cols + i];
      float& out = y[n * W.rows + r];
      out = static_cast<float>(accumulate ? out + s : s);
    }
  }
}

}  // namespace

void matmul(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  const std::vector<double> wide(x, x + N * W.cols);
  product(W, wide.data(), y, N, accumulate);
}

std::vector<double> int8_rounded_x(const float* x, int64_t N, int64_t cols) {
  DIFFTX_CHECK(cols % 32 == 0, "reference::int8_rounded_x: ", cols, " columns are not whole 32-blocks");
  std::vector<double> out(N * cols);
  for (int64_t b = 0; b < N * cols; b += 32) {
    float amax = 0;
    for (int64_t j = b; j < b + 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127, inverse = d != 0.0f ? 1.0f / d : 0.0f;
    for (int64_t j = b; j < b + 32; ++j) out[j] = static_cast<double>(d) * std::nearbyint(x[j] * inverse);
  }
  return out;
}

void matmul_int8_x(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  product(W, int8_rounded_x(x, N, W.cols).data(), y, N, accumulate);
}

}  // namespace difftx::reference
