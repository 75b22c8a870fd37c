// One row of each block type, F32 in and out (internal to src/kernels/quant). cols is a
// multiple of the block size (checked by the callers).
#pragma once
#include <cstdint>

#include "kernels/quant/block_formats.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t cols);
void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t cols);
void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t cols);

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t cols);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t cols);
void dequantize_row_q4_k(const BlockQ4_K* x, float* y, int64_t cols);

// Round to nearest, ties to even, in the default rounding mode (GGML's nearest_int).
int nearest_int(float value);

}  // namespace difftx::kernels::DIFFTX_ISA::quant
