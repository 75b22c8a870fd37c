// The portable row dots: each block widened to F32 by the dequantizer, then summed in order.
#include "kernels/quant/row_dots.h"
#include "kernels/quant/type_kernels.h"

#include <algorithm>

#include "kernels/quant/quantize.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::quant {
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

// F32 weights as they are (the F32 GEMV of builds without AVX-512): 16 partial sums the
// compiler can keep in vector lanes without reordering anything, so the order is the source's
// whatever the alignment of x, and the bits the same for any batch.
void dots_f32(const WeightMatrix& W, const PreparedX& px, int64_t r0, int n, float* out) {
  const float* x = px.x;
  for (int i = 0; i < n; ++i) {
    const float* w = static_cast<const float*>(W.data) + (r0 + i) * W.cols;
    float part[16] = {};
    int64_t j = 0;
    for (; j + 16 <= W.cols; j += 16)
      for (int k = 0; k < 16; ++k) part[k] += w[j + k] * x[j + k];
    float sum = 0;
    for (float p : part) sum += p;
    for (; j < W.cols; ++j) sum += w[j] * x[j];
    out[i] = sum;
  }
}

}  // namespace

void register_row_dots_scalar(TypeKernelTable& table) {
  for (TypeKernels& kernels : table.entries) kernels.row_dots_scalar = each_x_row<dots_scalar>;
  table[WeightType::f32].row_dots_scalar = each_x_row<dots_f32>;  // F32 weights as they are
}

}  // namespace difftx::kernels::DIFFTX_ISA::quant
