// Mamba-1's conv and selective scan (kernels/mamba.h) in double, prompt form: same contracts.
#pragma once
#include <cstdint>

#include "kernels/mamba.h"

namespace difftx::reference {

void mamba_conv_prompt(const kernels::MambaDims& dims, int64_t T, const double* x, int64_t ld_x, const double* w,
                       const double* bias, double* window, double* u);
void mamba_scan_prompt(const kernels::MambaDims& dims, int64_t T, const double* u, const double* dt_in,
                       const double* dt_bias, const double* a_log, const double* B, const double* C, int64_t ld_bc,
                       const double* D, double* state, double* y);

}  // namespace difftx::reference
