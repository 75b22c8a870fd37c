// The double twins of the Mamba kernels (mamba_reference.h): the plainest loops, the recurrence as
// kernels/mamba.h writes it.
#include "reference/mamba_reference.h"

#include <cmath>
#include <vector>

namespace difftx::reference {

void mamba_conv_prompt(const kernels::MambaDims& dims, int64_t T, const double* x, int64_t ld_x, const double* w,
                       const double* bias, double* window, double* u) {
  dims.validate();
  const int64_t E = dims.channels, K = dims.conv;
  std::vector<double> inputs((K - 1 + T) * E);  // the old window, then x
  for (int64_t j = 0; j < K - 1; ++j)
    for (int64_t c = 0; c < E; ++c) inputs[j * E + c] = window[j * E + c];
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < E; ++c) inputs[(K - 1 + t) * E + c] = x[t * ld_x + c];
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < E; ++c) {
      double acc = bias[c];
      for (int64_t j = 0; j < K; ++j) acc += w[c * K + j] * inputs[(t + j) * E + c];
      u[t * E + c] = acc / (1.0 + std::exp(-acc));
    }
  for (int64_t j = 0; j < K - 1; ++j)
    for (int64_t c = 0; c < E; ++c) window[j * E + c] = inputs[(T + j) * E + c];
}

void mamba_scan_prompt(const kernels::MambaDims& dims, int64_t T, const double* u, const double* dt_in,
                       const double* dt_bias, const double* a_log, const double* B, const double* C, int64_t ld_bc,
                       const double* D, double* state, double* y) {
  dims.validate();
  const int64_t E = dims.channels, S = dims.state;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < E; ++c) {
      const double raw = dt_in[t * E + c] + dt_bias[c];
      const double dt = raw > 20.0 ? raw : std::log1p(std::exp(raw));
      double out = D[c] * u[t * E + c];
      for (int64_t n = 0; n < S; ++n) {
        double& s = state[c * S + n];
        s = std::exp(-dt * std::exp(a_log[c * S + n])) * s + dt * B[t * ld_bc + n] * u[t * E + c];
        out += C[t * ld_bc + n] * s;
      }
      y[t * E + c] = out;
    }
}

}  // namespace difftx::reference
