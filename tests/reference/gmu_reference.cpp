#include "reference/gmu_reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace difftx::reference {

void gmu_forward(const double* in_proj, const double* out_proj, int64_t D, int64_t E, const double* x,
                 const double* memory, double* out, int64_t rows, double* gated) {
  std::vector<double> row(E);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = 0; e < E; ++e) {
      double g = 0;
      for (int64_t k = 0; k < D; ++k) g += in_proj[e * D + k] * x[r * D + k];
      row[e] = memory[r * E + e] * g / (1.0 + std::exp(-g));
    }
    if (gated) std::copy(row.begin(), row.end(), gated + r * E);
    for (int64_t k = 0; k < D; ++k) {
      double sum = 0;
      for (int64_t e = 0; e < E; ++e) sum += out_proj[k * E + e] * row[e];
      out[r * D + k] = sum;
    }
  }
}

}  // namespace difftx::reference
