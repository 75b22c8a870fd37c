// One CPU level's kernels for each weight type (internal to src/kernels/quant; the per-level half
// of a type's registration, weight_type.h holding its facts; ggml's type_traits_cpu). Each kernel
// source adds what it compiled at this level to the table (its register_* function, empty where
// the level lacks the kernel); the table is filled once per level, at its first use, and matmul
// looks a type up once per product.
#pragma once
#include <array>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quant/matmul.h"
#include "kernels/quant/row_dots.h"
#include "kernels/quant/weight_type.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

using QuantizeRow = void (*)(const float* x, void* y, int64_t cols);
using DequantizeRow = void (*)(const void* x, float* y, int64_t cols);
using Gemm = void (*)(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate);

struct TypeKernels {
  // One row, F32 in or out (quantize.h has the rules); every type (quantize.cpp).
  QuantizeRow quantize_row = nullptr;
  DequantizeRow dequantize_row = nullptr;
  // The decode row dots (row_dots.h), nullptr where none: the portable loops (every type); weights
  // widened to F32 in vector registers (AVX-512: every type, row_dots_avx512.cpp; AVX2 + FMA +
  // F16C where AVX-512 is not compiled in, row_dots_avx2.cpp, and NEON, row_dots_neon.cpp: the
  // float types and Q8_0); x quantized to int8 (Q8_0, Q4_0, Q4_K; prepare_x's int8 pairs: AVX-512
  // VNNI, row_dots_vnni.cpp; AVX2 vpmaddubsw, or AVX-VNNI's vpdpbusd, where AVX-512 VNNI is not,
  // row_dots_int8_avx2.cpp; NEON, sdot with the dotprod extension, row_dots_neon.cpp).
  RowDots row_dots_scalar = nullptr;
  RowDots row_dots_widened = nullptr;
  RowDots row_dots_int8 = nullptr;
  // The prefill GEMMs of the gemm order (gemm_int8.h, gemm_float.h), and whether each reads a
  // matrix's prebuilt weight panels (weight_panels.h). nullptr where none.
  Gemm gemm_int8 = nullptr;
  bool gemm_int8_reads_panels = false;
  Gemm gemm_float = nullptr;
  bool gemm_float_reads_panels = false;
};

struct TypeKernelTable {
  std::array<TypeKernels, kWeightTypeCount> entries;
  TypeKernels& operator[](WeightType type) { return entries[static_cast<size_t>(type)]; }
};

// This level's kernels for `type`.
const TypeKernels& type_kernels(WeightType type);

// The registrations, each beside its kernels.
void register_quantizers(TypeKernelTable& table);
void register_row_dots_scalar(TypeKernelTable& table);
void register_row_dots_avx512(TypeKernelTable& table);
void register_row_dots_avx2(TypeKernelTable& table);
void register_row_dots_neon(TypeKernelTable& table);
void register_row_dots_vnni(TypeKernelTable& table);
void register_row_dots_int8_avx2(TypeKernelTable& table);
void register_row_dots_int8_neon(TypeKernelTable& table);
void register_gemm_int8(TypeKernelTable& table);
void register_gemm_float(TypeKernelTable& table);

}  // namespace difftx::kernels::DIFFTX_ISA::quant
