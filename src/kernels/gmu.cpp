#include "kernels/gmu.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/ops.h"

namespace difftx {

void gmu_forward(const WeightMatrix& in_proj, const WeightMatrix& out_proj, const float* x, const float* memory,
                 float* gate, float* out, int64_t rows, bool accumulate, MatmulOrder order) {
  DIFFTX_CHECK(in_proj.rows == out_proj.cols && in_proj.cols == out_proj.rows, "gmu_forward: in_proj [",
               in_proj.rows, ", ", in_proj.cols, "] and out_proj [", out_proj.rows, ", ", out_proj.cols,
               "] must be [E, D] and [D, E]");
  DIFFTX_CHECK(rows >= 0, "gmu_forward: rows must be >= 0, got ", rows);
  if (rows == 0) return;
  matmul(in_proj, x, gate, rows, false, order);
  swiglu_forward(gate, memory, gate, rows * in_proj.rows);  // silu(gate) * memory, in place
  matmul(out_proj, gate, out, rows, accumulate, order);
}

namespace reference {
void gmu_forward(const double* in_proj, const double* out_proj, int64_t D, int64_t E, const double* x,
                 const double* memory, double* out, int64_t rows) {
  std::vector<double> gated(E);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = 0; e < E; ++e) {
      double g = 0;
      for (int64_t k = 0; k < D; ++k) g += in_proj[e * D + k] * x[r * D + k];
      gated[e] = memory[r * E + e] * g / (1.0 + std::exp(-g));
    }
    for (int64_t k = 0; k < D; ++k) {
      double sum = 0;
      for (int64_t e = 0; e < E; ++e) sum += out_proj[k * E + e] * gated[e];
      out[r * D + k] = sum;
    }
  }
}
}  // namespace reference

}  // namespace difftx
