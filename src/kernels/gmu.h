// The Gated Memory Unit of SambaY's cross-decoder (docs/MODEL.md "SambaY"):
//   out = out_proj(memory * silu(in_proj(x)))
// x [rows, D], memory [rows, E] (the memory Mamba layer's scan output for the same tokens),
// in_proj [E, D], out_proj [D, E] in any storage type (kernels/quant/matmul.h); gate [rows, E] is
// scratch, out [rows, D] is written (accumulate: added to).
#pragma once
#include <cstdint>

#include "kernels/quant/matmul.h"

namespace difftx {

void gmu_forward(const WeightMatrix& in_proj, const WeightMatrix& out_proj, const float* x, const float* memory,
                 float* gate, float* out, int64_t rows, bool accumulate = false,
                 MatmulOrder order = MatmulOrder::by_size);

namespace reference {
// The twin in double, the weights given as double [E, D] and [D, E].
void gmu_forward(const double* in_proj, const double* out_proj, int64_t D, int64_t E, const double* x,
                 const double* memory, double* out, int64_t rows);
}  // namespace reference

}  // namespace difftx
