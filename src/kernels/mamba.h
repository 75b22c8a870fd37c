// Mamba-1's sequence mixing (docs/MODEL.md "SambaY"): the causal depthwise convolution and the
// selective scan over the E channels of a sequence, with S state entries per channel:
//
//   conv:  u[t, c] = silu(bias[c] + sum_{j < K} w[c, j] x[t - K + 1 + j, c])
//   scan:  dt = softplus(dt_in[t, c] + dt_bias[c]),  A[c, n] = -exp(A_log[c, n]),
//          s[c, n] <- exp(dt A[c, n]) s[c, n] + dt B[t, n] u[t, c],
//          y[t, c] = sum_n C[t, n] s[c, n] + D[c] u[t, c]      (the D skip; no gate here)
//
// What a sequence carries from one call to the next: its conv window, the last K - 1 inputs x
// [K - 1, E] oldest first (zeros before its first token), and its SSM state s [E, S] (zeros at
// first). The prompt kernels take T rows of one sequence (parallel over channels, sequential over
// time); the step kernels one row of each of `rows` sequences (a decode batch), each with its own
// window and state. Both compute every (token, channel) with the same operations in the same
// order, so a prompt cut anywhere, or continued step by step, gives the same bits. The twins in
// double, with the same contracts, are tests/reference/mamba_reference.h.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace difftx::kernels {

constexpr int64_t kMambaMostState = 256;  // the largest S the kernels take

struct MambaDims {
  int64_t channels;  // E = mamba_expand * hidden_size
  int64_t state;     // S = mamba_d_state
  int64_t conv;      // K = mamba_d_conv
  void validate() const;  // throws difftx::Error naming the bad field
};

// A CPU level's kernels.
namespace DIFFTX_ISA {

// x: T rows with row stride ld_x >= E (the x half of in_proj's output), w [E, K], bias [E],
// window [K - 1, E] read and advanced, u [T, E] written.
void mamba_conv_prompt(const MambaDims& dims, int64_t T, const float* x, int64_t ld_x, const float* w,
                       const float* bias, float* window, float* u);
// u and dt_in [T, E] (dt_in: dt_proj's product without its bias), dt_bias [E], a_log [E, S],
// B and C: T rows with row stride ld_bc >= S (columns of x_proj's output), D [E],
// state [E, S] read and advanced, y [T, E] written.
void mamba_scan_prompt(const MambaDims& dims, int64_t T, const float* u, const float* dt_in, const float* dt_bias,
                       const float* a_log, const float* B, const float* C, int64_t ld_bc, const float* D, float* state,
                       float* y);

// One token of each of `rows` sequences: row r of x, u, dt_in, B, C and y, with windows[r] and
// states[r] its sequence's window and state.
void mamba_conv_step(const MambaDims& dims, int64_t rows, const float* x, int64_t ld_x, const float* w,
                     const float* bias, float* const* windows, float* u);
void mamba_scan_step(const MambaDims& dims, int64_t rows, const float* u, const float* dt_in, const float* dt_bias,
                     const float* a_log, const float* B, const float* C, int64_t ld_bc, const float* D,
                     float* const* states, float* y);

}  // namespace DIFFTX_ISA

}  // namespace difftx::kernels
