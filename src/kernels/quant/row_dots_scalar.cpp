// The portable row dots: each block widened to F32 by the dequantizer, then summed in order.
#include "kernels/quant/row_dots.h"

#include <algorithm>

#include "kernels/quant/quantize.h"

namespace difftx::quant {
namespace {

void dots_scalar(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  // a chunk is one block (quantized types) or up to 256 weights (float types)
  const int64_t block = weight_type_info(W.type).block_weights;
  const int64_t chunk = block > 1 ? block : 256;
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);
  float buffer[256];
  for (int i = 0; i < n; ++i) {
    const auto* row = static_cast<const uint8_t*>(W.data) + (r0 + i) * row_bytes;
    float sum = 0;
    for (int64_t c = 0; c < W.cols; c += chunk) {
      const int64_t len = std::min(chunk, W.cols - c);
      const int64_t offset = block > 1 ? c / block * weight_type_info(W.type).block_bytes
                                       : c * weight_type_info(W.type).block_bytes;
      dequantize_rows(W.type, row + offset, buffer, 1, len);
      for (int64_t j = 0; j < len; ++j) sum += buffer[j] * x[c + j];
    }
    out[i] = sum;
  }
}

}  // namespace

RowDots row_dots_scalar(WeightType) { return each_x_row<dots_scalar>; }

}  // namespace difftx::quant
