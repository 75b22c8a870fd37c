// RMSNorm (kernels/ops.h): y = x / sqrt(mean(x^2) + eps) * g per row of n, one workgroup per
// row; the row's reciprocal RMS into rstd when has_rstd.
#version 450
#include "common.glsl"

#define WG 128
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer GBuffer { float g[]; } G;
layout(std430, set = 0, binding = 2) writeonly buffer YBuffer { float y[]; } Y;
layout(std430, set = 0, binding = 3) writeonly buffer RBuffer { float r[]; } R;
layout(push_constant) uniform Push {
  uint x_at, g_at, y_at, rstd_at, has_rstd, rows, n;
  float eps;
} p;

shared float partial[WG];

void main() {
  const uint row = group_index();
  if (row >= p.rows) return;
  const uint t = gl_LocalInvocationID.x, x0 = p.x_at + row * p.n;
  float s = 0.0;
  for (uint k = t; k < p.n; k += WG) s = fma(X.x[x0 + k], X.x[x0 + k], s);
  partial[t] = s;
  barrier();
  float sum = 0.0;  // every thread adds the partials in the same order (one barrier: lavapipe runs
  for (uint j = 0u; j < WG; ++j) sum += partial[j];  // each as a coroutine switch per invocation)
  const float rstd = 1.0 / sqrt(sum / float(p.n) + p.eps);
  for (uint k = t; k < p.n; k += WG) Y.y[p.y_at + row * p.n + k] = X.x[x0 + k] * rstd * G.g[p.g_at + k];
  if (t == 0u && p.has_rstd != 0u) R.r[p.rstd_at + row] = rstd;
}
