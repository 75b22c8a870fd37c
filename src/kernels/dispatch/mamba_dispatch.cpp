// The Mamba kernels (mamba.h), each a call to the CPU level's copy (dispatch.h).
#include "kernels/dispatch/dispatch.h"
#include "kernels/mamba.h"

namespace difftx {

DIFFTX_LEVELS_DECLARE(mamba_conv_prompt)
DIFFTX_LEVELS_DECLARE(mamba_scan_prompt)
DIFFTX_LEVELS_DECLARE(mamba_conv_step)
DIFFTX_LEVELS_DECLARE(mamba_scan_step)

void mamba_conv_prompt(const MambaDims& dims, int64_t T, const float* x, int64_t ld_x, const float* w,
                       const float* bias, float* window, float* u) {
  DIFFTX_LEVEL_CALL(mamba_conv_prompt)(dims, T, x, ld_x, w, bias, window, u);
}
void mamba_scan_prompt(const MambaDims& dims, int64_t T, const float* u, const float* dt_in, const float* dt_bias,
                       const float* a_log, const float* B, const float* C, int64_t ld_bc, const float* D, float* state,
                       float* y) {
  DIFFTX_LEVEL_CALL(mamba_scan_prompt)(dims, T, u, dt_in, dt_bias, a_log, B, C, ld_bc, D, state, y);
}
void mamba_conv_step(const MambaDims& dims, int64_t rows, const float* x, int64_t ld_x, const float* w,
                     const float* bias, float* const* windows, float* u) {
  DIFFTX_LEVEL_CALL(mamba_conv_step)(dims, rows, x, ld_x, w, bias, windows, u);
}
void mamba_scan_step(const MambaDims& dims, int64_t rows, const float* u, const float* dt_in, const float* dt_bias,
                     const float* a_log, const float* B, const float* C, int64_t ld_bc, const float* D,
                     float* const* states, float* y) {
  DIFFTX_LEVEL_CALL(mamba_scan_step)(dims, rows, u, dt_in, dt_bias, a_log, B, C, ld_bc, D, states, y);
}

}  // namespace difftx
