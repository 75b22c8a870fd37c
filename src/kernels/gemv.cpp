#include "kernels/gemv.h"

#include "core/error.h"
#include "kernels/quant/matmul.h"

namespace difftx {

// The F32 case of the row dots (kernels/quant/row_dots.h) at one row of x: the same code, and so
// the same bits, as every row of a batched product in matmul's gemv order.
void gemv(const float* W, const float* x, float* y, int64_t out, int64_t in, bool accumulate) {
  DIFFTX_CHECK(out >= 0 && in >= 0, "gemv: negative size out=", out, " in=", in);
  DIFFTX_CHECK(out == 0 || (W && x && y), "gemv: W, x and y must not be null");
  matmul({WeightType::f32, W, out, in}, x, y, 1, accumulate, MatmulOrder::gemv);
}

void gemv_reference(const float* W, const float* x, float* y, int64_t out, int64_t in, bool accumulate) {
  for (int64_t r = 0; r < out; ++r) {
    double s = 0;
    for (int64_t i = 0; i < in; ++i) s += static_cast<double>(W[r * in + i]) * x[i];
    y[r] = static_cast<float>(accumulate ? y[r] + s : s);
  }
}

}  // namespace difftx
