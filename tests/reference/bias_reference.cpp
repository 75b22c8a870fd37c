#include "reference/bias_reference.h"

namespace difftx::reference {

void add_bias(double* y, const double* bias, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] += bias[c];
}

}  // namespace difftx::reference
