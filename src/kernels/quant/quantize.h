// F32 <-> inference weight types, row by row (rows are independent; a row is cols weights).
// The quantizers follow GGML's reference quantizers (quantize_row_*_ref in ggml-quants.c)
// operation for operation, evaluated in strict single precision (no fused multiply-add), so
// they write the bytes GGML's reference writes; docs/FORMATS.md has the rules and the bounds.
#pragma once
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quant/weight_type.h"

namespace difftx::kernels::DIFFTX_ISA {

// dst holds weight_matrix_bytes(type, rows, cols) bytes. F32 copies; BF16 and F16 round to
// nearest even. Throws when cols is not a multiple of the type's block.
void quantize_rows(WeightType type, const float* src, void* dst, int64_t rows, int64_t cols);

// The inverse: every stored weight widened to F32 (F32, BF16, F16, Q8_0 and Q4_0 exactly; Q4_K
// with one rounding, of d*s*q - dmin*m).
void dequantize_rows(WeightType type, const void* src, float* dst, int64_t rows, int64_t cols);

}  // namespace difftx::kernels::DIFFTX_ISA
