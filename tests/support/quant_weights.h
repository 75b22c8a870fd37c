// Shared by the matmul tests: every weight type, quantized random weights with their dequantized
// values, and the bound on a kernel's distance from the double reference.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "core/rng.h"
#include "kernels/quant/matmul.h"

namespace difftx::testing {

inline constexpr kernels::WeightType kWeightTypes[] = {kernels::WeightType::f32,  kernels::WeightType::bf16,
                                                       kernels::WeightType::f16,  kernels::WeightType::q8_0,
                                                       kernels::WeightType::q4_0, kernels::WeightType::q4_k};

struct Quantized {
  std::vector<uint8_t> bytes;
  std::vector<float> dequantized;
  std::vector<float> minimums;  // Q4_K: dmin * m of each weight's sub-block, else 0
  kernels::WeightMatrix matrix() const { return {type, bytes.data(), rows, cols}; }
  kernels::WeightType type;
  int64_t rows, cols;
};

Quantized make_weights(kernels::WeightType type, int64_t rows, int64_t cols, Rng& rng);

// Float32 sums of `cols` terms (rounding.terms_per_column a column): at most
// rounding.step_rounding (2^-24) of the sum of the terms' magnitudes each step; the Q4_K kernel
// sums d*s*q*x and m*x apart, so their magnitudes count (|d s q| <= |w| + m). x_int8: x rounded
// to d_x * round(x / d_x), d_x = max |x| / 127 over x's 32-block: up to d_x / 2 per element, times
// |w|. rounding: a device's rounding of the inputs, as input_rounding_error.
double matmul_tolerance(const Quantized& q, const float* x, int64_t r, bool x_int8,
                        const backends::MatmulInputRounding& rounding = {});

// The most a device's rounding of the inputs (Backend::matmul_input_rounding) moves row r's product
// with x: the sum of |w| e(x) + |x| e(w) + e(x) e(w), e(v) = relative |v| + absolute.
double input_rounding_error(const Quantized& q, const float* x, int64_t r,
                            const backends::MatmulInputRounding& rounding);

}  // namespace difftx::testing
