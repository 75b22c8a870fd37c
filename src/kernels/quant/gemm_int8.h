// Prefill GEMM for the block types with int8 dot products (internal to src/kernels/quant):
//   y[N, rows] (+)= x[N, cols] W^T
// x is quantized per 32-block (Q8_0's rule, as for the int8 decode). The x86 levels multiply
// weight panels (weight_panels.h: 4 weights of each of 16 rows per 64 bytes), the matrix's own
// (WeightMatrix::panels) or repacked per call, so that one vpdpbusd (AVX-512 VNNI; two
// vpmaddubsw on AVX2, two AVX-VNNI vpdpbusd at the avxvnni level) multiplies 4 weights of each
// of 16 rows by the same 4 bytes of one x row (broadcast): each int32 lane is one output, no
// horizontal sums. Per 32-block, a lane starts from -offset * (sum of the x block's bytes)
// (offset 8 for Q4_0; for Q8_0 128 where AVX-512 VNNI takes w + 128 as its unsigned operand, 0
// where AVX2 takes |w|; 0 for Q4_K) and ends scaled by d_w * d_x; Q4_K's minimums come off with
// the sums of the quantized x (QuantizedX::sum, int8_x.h). Each output is one F32 chain over its
// blocks, whatever N and the other rows of x are (batch invariance, matmul.h).
#pragma once
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quant/matmul.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

// The kernels are registered per type in the level's table (type_kernels.h: TypeKernels::gemm_int8);
// these two read it.

// Whether this level has the kernel for `type` (Q8_0, Q4_0, Q4_K with AVX-512 VNNI or AVX2, or
// on ARM with the dotprod extension, smmla with i8mm: gemm_int8_neon.cpp).
bool gemm_int8_available(WeightType type);

// Whether this level's kernel for `type` multiplies weight panels (weight_panels.h): then a
// matrix's prebuilt panels (WeightMatrix::panels) are read as they are (the x86 levels).
bool gemm_int8_reads_panels(WeightType type);

}  // namespace difftx::kernels::DIFFTX_ISA::quant
