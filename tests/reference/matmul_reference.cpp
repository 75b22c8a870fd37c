#include "reference/matmul_reference.h"

#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"

namespace difftx::reference {

void matmul(const kernels::WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
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

}  // namespace difftx::reference
