// Matrix products with weights in an inference storage type (weight_type.h):
//   y[N, rows] = x[N, cols] W^T      (accumulate = false)
//   y[N, rows] += x[N, cols] W^T     (accumulate = true; a residual add for free)
// W is [rows, cols] = [out, in], x and y are F32 and row-major. Few rows of x are decode steps
// (a GEMV, bound by reading every weight once; N rows read the weights once for all), many a
// prefill (a GEMM). Weights are widened to F32
// on the fly (no copy of the matrix in F32); x stays F32. Work is split over OpenMP threads by
// output rows; every output is one reduction in a fixed order, so results do not depend on the
// thread count. docs/FORMATS.md lists the types; docs/BENCHMARKS.md the speeds.
#pragma once
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quant/weight_type.h"

namespace difftx::kernels {

struct WeightMatrix {
  WeightType type;
  const void* data;  // rows x weight_row_bytes(type, cols) bytes, rows one after another
  int64_t rows, cols;
  const void* panels = nullptr;  // the same weights repacked for the int8 GEMM (weight_panels.h), or null
};

// Which code runs. Decode (N < 8): the portable scalar loops; `simd`, weights widened to F32 in
// vector registers (AVX-512: every type; AVX2 + FMA + F16C and NEON: the float types and Q8_0;
// F32 weights as they are: gemv.h); or `simd_int8`, x quantized to int8 per 32-block and integer
// dot products (Q8_0, Q4_0, Q4_K: AVX-512 VNNI, AVX2 vpmaddubsw or AVX-VNNI, NEON sdot or
// widening multiplies; other types fall back to simd). Prefill (N >= 8): simd and scalar widen
// panels to F32 for sgemm, simd_int8 uses int8 x with repacked weight panels (the block types). A
// path the CPU level lacks falls back. `best` is the fastest measured per type and level (docs/BENCHMARKS.md).
enum class MatmulPath { best, scalar, simd, simd_int8 };


// The reduction order every row of a product follows. by_size: the GEMV below kGemmMinRows (8)
// rows of x, the GEMM from there (training, eval, analyses): a row's bits depend on N.
// gemv / gemm: each row of x gives the same bits whatever N is and whatever the other rows hold
// (the engine's batch invariance, infer/engine.h), at any thread count. gemv is the decode
// GEMV's order for any N: row r of y[n] has the bits of the single-row GEMV of x[n] (gemv() for
// F32); the weights are read once per group of weight rows for all N rows of x. gemm is the
// prefill GEMM's order for any N >= 1: the int8 GEMM (gemm_int8.h) for Q8_0, Q4_0, Q4_K, and
// for F32, BF16 and F16 a GEMM with one F32 FMA chain per output (gemm_float.h; OpenBLAS
// sgemm is not invariant: 0.3.21 takes other kernels at small M * N * K, as for M = 1 against a
// 256-row panel, than at large M, see docs/BENCHMARKS.md; nor is the by_size GEMM). The int8
// GEMM exists for AVX-512, AVX2 and ARM dotprod, the float GEMM for AVX-512, AVX2 and NEON; a
// level without one (scalar; neon for the block types) runs the gemv order instead. Both GEMMs
// repack the weights on every call, so the gemm order costs a pass over them even at N = 1,
// except for a block-type matrix with prebuilt panels (WeightMatrix::panels, weight_panels.h):
// that one takes the int8 GEMM's order for gemv and gemm alike, read without repacking (the
// engine's matrices: Model::engine_matrices). The `best` path (MatmulPath) runs in both.
enum class MatmulOrder { by_size, gemv, gemm };

// A CPU level's products, by path and by order.
namespace DIFFTX_ISA {
void matmul(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulPath path);
void matmul(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate, MatmulOrder order);
// Whether MatmulPath::simd_int8 below 8 rows of x quantizes x for `type` at this level (the int8
// row dots; from 8 rows on, the int8 GEMM: quant::gemm_int8_available).
bool row_dots_int8_available(WeightType type);
}  // namespace DIFFTX_ISA

}  // namespace difftx::kernels
