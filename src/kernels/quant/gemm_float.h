// Prefill GEMM for the float weight types, invariant in N (internal to src/kernels/quant):
//   y[N, rows] (+)= x[N, cols] W^T
// Weights are widened to F32 and packed, 16 rows at a time, as [cols][16 rows] (a panel; BF16 by
// a 16-bit shift, F16 by vcvtph2ps or fcvtl, F32 as it is; a 16 x 16 transpose per 16 columns), once per
// call for all N rows of x. The micro-kernel takes 3 panels (48 weight rows) against up to 8 rows
// of x: for k = 0 .. cols - 1 it broadcasts x[n][k] and does acc = fma(x[n][k], w[k][lane],
// acc), one zmm of 16 outputs per (panel, x row). AVX2 (without AVX-512): panels of 8 rows, 4
// of them against up to 3 rows of x; NEON (ARM): one panel of 16 rows (4 vectors, 4 x 4
// transposes) against up to 6 rows of x; the same chain per output. So every output is one chain of cols FMAs in
// the order of k, from zero, then (accumulate) added to y: its bits do not depend on N, on which
// tile or tail tile holds the row, on the other rows, nor on the thread count.
//
// A BF16 or F16 matrix with prebuilt panels (WeightMatrix::panels, weight_panels.h: the same
// [cols][16 rows] order in the stored type) is widened in registers instead, to the same F32
// values, so the bits are the same. Packing per call costs a pass over the weights whatever N
// is, so small N pay for it: a 2048 x
// 2048 BF16 matrix at one thread took 1.17, 2.17 and 5.7 ms at N = 1, 16 and 64 against 0.48,
// 1.50 and 5.6 ms in the gemv order (2.4x, 1.4x, even); at N >= 128 it runs at 100-112 GFLOPS,
// 1.1-1.27x OpenBLAS sgemm (docs/BENCHMARKS.md, "Prefill GEMM for the float types").
#pragma once
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quant/matmul.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

// The kernels are registered per type in the level's table (type_kernels.h: TypeKernels::gemm_float);
// these two read it.

// Whether this level has the kernel for `type` (F32, BF16, F16 with AVX-512F, AVX2 + FMA + F16C
// or NEON).
bool gemm_float_available(WeightType type);

// Whether this level's kernel for `type` reads prebuilt panels (BF16, F16 where it is built).
bool gemm_float_reads_panels(WeightType type);

}  // namespace difftx::kernels::DIFFTX_ISA::quant
