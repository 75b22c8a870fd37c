// The Gated Memory Unit of SambaY's cross-decoder (backends/backend.h gmu_forward) in double:
//   out = out_proj(memory * silu(in_proj(x)))
// x [rows, D], memory [rows, E], the weights as double in_proj [E, D] and out_proj [D, E];
// gated [rows, E], where given: memory * silu(in_proj(x)).
#pragma once
#include <cstdint>

namespace difftx::reference {

void gmu_forward(const double* in_proj, const double* out_proj, int64_t D, int64_t E, const double* x,
                 const double* memory, double* out, int64_t rows, double* gated = nullptr);

}  // namespace difftx::reference
