// Mamba-1's conv and selective scan (mamba.h), compiled per CPU level (kernels/isa.h). Every
// (token, channel) goes through conv_channel and scan_channel below, in the prompt kernels and the
// step kernels alike, which is what makes a prompt continued step by step give the bits of the
// whole prompt at a level. MambaDims::validate is in mamba_dims.cpp.
#include "kernels/mamba.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/isa.h"
#include "kernels/op_threading.h"
#include "kernels/vector_math.h"

namespace difftx::kernels::DIFFTX_ISA {
namespace {

constexpr int64_t kChannelBlock = 64;  // channels a conv work item covers (contiguous loads)

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
// PyTorch's softplus with its threshold 20, above which it is the identity.
inline float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// silu(bias + sum_j w[j] in(j)), in(j) the K inputs oldest first.
template <typename Input>
inline float conv_channel(const float* w, float bias, int64_t K, Input in) {
  float acc = bias;
  for (int64_t j = 0; j < K; ++j) acc += w[j] * in(j);
  return silu(acc);
}

// e^x of the state's decay: exp_approx (relative error below 1.5e-7), which vectorises where the
// level has fused multiply-add; std::exp where it would be a library call per step (scalar level).
inline float decay(float x) {
#if defined(__FMA__) || defined(__ARM_NEON)
  return exp_approx(x);
#else
  return std::exp(x);
#endif
}

// One token of one channel: advances s [S] and returns y (A = -exp(A_log) of the channel). The
// state entries are independent: one vector loop over them.
inline float scan_channel(int64_t S, float u, float dt_raw, const float* A, const float* B, const float* C, float D,
                          float* s) {
  const float dt = softplus(dt_raw), du = dt * u;
  float y = 0;
#pragma omp simd reduction(+ : y)
  for (int64_t n = 0; n < S; ++n) {
    s[n] = decay(dt * A[n]) * s[n] + du * B[n];
    y += C[n] * s[n];
  }
  return y + D * u;
}

inline void channel_decay(int64_t S, const float* a_log, float* A) {
  for (int64_t n = 0; n < S; ++n) A[n] = -std::exp(a_log[n]);
}

void check_rows(const char* op, const MambaDims& dims, int64_t rows, int64_t ld, int64_t least, const char* ld_name) {
  dims.validate();
  DIFFTX_CHECK(rows >= 0, op, ": the number of rows must be >= 0, got ", rows);
  DIFFTX_CHECK(ld >= least, op, ": row stride ", ld_name, " (", ld, ") must be at least ", least);
}

}  // namespace

void mamba_conv_prompt(const MambaDims& dims, int64_t T, const float* x, int64_t ld_x, const float* w,
                       const float* bias, float* window, float* u) {
  check_rows("mamba_conv_prompt", dims, T, ld_x, dims.channels, "ld_x");
  const int64_t E = dims.channels, K = dims.conv;
#pragma omp parallel for schedule(static) if (worth_parallel(T * E * K))
  for (int64_t c0 = 0; c0 < E; c0 += kChannelBlock) {
    const int64_t c1 = std::min(E, c0 + kChannelBlock);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = c0; c < c1; ++c)
        u[t * E + c] = conv_channel(w + c * K, bias[c], K, [&](int64_t j) {
          const int64_t src = t - K + 1 + j;  // < 0: from before this call
          return src < 0 ? window[(K - 1 + src) * E + c] : x[src * ld_x + c];
        });
    // The new window: the last K - 1 inputs of (old window, x).
    for (int64_t j = 0; j < K - 1; ++j) {
      const int64_t src = T - K + 1 + j;
      for (int64_t c = c0; c < c1; ++c) window[j * E + c] = src < 0 ? window[(j + T) * E + c] : x[src * ld_x + c];
    }
  }
}

void mamba_scan_prompt(const MambaDims& dims, int64_t T, const float* u, const float* dt_in, const float* dt_bias,
                       const float* a_log, const float* B, const float* C, int64_t ld_bc, const float* D, float* state,
                       float* y) {
  check_rows("mamba_scan_prompt", dims, T, ld_bc, dims.state, "ld_bc");
  const int64_t E = dims.channels, S = dims.state;
#pragma omp parallel for schedule(static) if (worth_parallel(T * E * S))
  for (int64_t c = 0; c < E; ++c) {
    float A[kMambaMostState];
    channel_decay(S, a_log + c * S, A);
    for (int64_t t = 0; t < T; ++t)
      y[t * E + c] = scan_channel(S, u[t * E + c], dt_in[t * E + c] + dt_bias[c], A, B + t * ld_bc, C + t * ld_bc, D[c],
                                  state + c * S);
  }
}

void mamba_conv_step(const MambaDims& dims, int64_t rows, const float* x, int64_t ld_x, const float* w,
                     const float* bias, float* const* windows, float* u) {
  check_rows("mamba_conv_step", dims, rows, ld_x, dims.channels, "ld_x");
  const int64_t E = dims.channels, K = dims.conv;
#pragma omp parallel for schedule(static) if (worth_parallel(rows * E * K))
  for (int64_t r = 0; r < rows; ++r) {
    float* window = windows[r];
    const float* xr = x + r * ld_x;
    for (int64_t c = 0; c < E; ++c) {
      u[r * E + c] = conv_channel(w + c * K, bias[c], K, [&](int64_t j) { return j < K - 1 ? window[j * E + c] : xr[c]; });
      for (int64_t j = 0; j + 1 < K - 1; ++j) window[j * E + c] = window[(j + 1) * E + c];
      if (K > 1) window[(K - 2) * E + c] = xr[c];
    }
  }
}

void mamba_scan_step(const MambaDims& dims, int64_t rows, const float* u, const float* dt_in, const float* dt_bias,
                     const float* a_log, const float* B, const float* C, int64_t ld_bc, const float* D,
                     float* const* states, float* y) {
  check_rows("mamba_scan_step", dims, rows, ld_bc, dims.state, "ld_bc");
  const int64_t E = dims.channels, S = dims.state;
#pragma omp parallel for collapse(2) schedule(static) if (worth_parallel(rows * E * S))
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < E; ++c) {
      float A[kMambaMostState];
      channel_decay(S, a_log + c * S, A);
      y[r * E + c] = scan_channel(S, u[r * E + c], dt_in[r * E + c] + dt_bias[c], A, B + r * ld_bc, C + r * ld_bc, D[c],
                                  states[r] + c * S);
    }
}

}  // namespace difftx::kernels::DIFFTX_ISA
