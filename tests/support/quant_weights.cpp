#include "support/quant_weights.h"

#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_kernels.h"
#include "io/float16.h"
#include "kernels/quant/block_formats.h"
#include "kernels/quant/quantize.h"
#include "support/testing.h"

namespace difftx::testing {

Quantized make_weights(kernels::WeightType type, int64_t rows, int64_t cols, Rng& rng) {
  Quantized q{{}, std::vector<float>(rows * cols), std::vector<float>(rows * cols, 0.0f), type, rows, cols};
  const auto w = random_vector(rows * cols, rng);
  q.bytes.resize(kernels::weight_matrix_bytes(type, rows, cols));
  backends::cpu::kernels().quantize_rows(type, w.data(), q.bytes.data(), rows, cols);
  backends::cpu::kernels().dequantize_rows(type, q.bytes.data(), q.dequantized.data(), rows, cols);
  if (type == kernels::WeightType::q4_k) {
    const auto* blocks = reinterpret_cast<const kernels::BlockQ4_K*>(q.bytes.data());
    for (int64_t i = 0; i < rows * cols; ++i)
      q.minimums[i] =
          io::f16_to_float(blocks[i / 256].dmin) * kernels::q4_k_scale_min(blocks[i / 256].scales, i % 256 / 32).min;
  }
  return q;
}

double matmul_tolerance(const Quantized& q, const float* x, int64_t r, bool x_int8,
                        const backends::MatmulInputRounding& rounding) {
  double magnitude = 0, x_rounding = 0;
  for (int64_t i = 0; i < q.cols; ++i) {
    const double w = std::fabs(q.dequantized[r * q.cols + i]);
    magnitude += (w + 2 * q.minimums[r * q.cols + i]) * std::fabs(x[i]);
    if (x_int8 && i % 32 == 0) {
      float amax = 0;
      for (int64_t j = i; j < i + 32; ++j) amax = std::max(amax, std::fabs(x[j]));
      for (int64_t j = i; j < i + 32; ++j) x_rounding += std::fabs(q.dequantized[r * q.cols + j]) * amax / 127 / 2;
    }
  }
  const double steps = static_cast<double>(rounding.terms_per_column * q.cols + 16);
  return steps * rounding.step_rounding * magnitude + input_rounding_error(q, x, r, rounding) +
         x_rounding * (1 + 1e-5) + 1e-6;
}

double input_rounding_error(const Quantized& q, const float* x, int64_t r,
                            const backends::MatmulInputRounding& rounding) {
  double error = 0;
  for (int64_t i = 0; i < q.cols; ++i) {
    const double w = std::fabs(q.dequantized[r * q.cols + i]), xi = std::fabs(x[i]);
    const double ew = rounding.w.error(w), ex = rounding.x.error(xi);
    error += w * ex + xi * ew + ex * ew;
  }
  return error;
}

}  // namespace difftx::testing
