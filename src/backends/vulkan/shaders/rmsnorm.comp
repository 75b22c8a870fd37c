// RMSNorm (kernels/ops.h): y = x / sqrt(mean(x^2) + eps) * g per row of n, one workgroup per
// row (read as norm_block.glsl says); the row's reciprocal RMS into rstd when has_rstd.
#version 450
#include "common.glsl"
#include "norm_block.glsl"

layout(std430, set = 0, binding = 0) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer GBuffer { float g[]; } G;
layout(std430, set = 0, binding = 2) writeonly buffer YBuffer { float y[]; } Y;
layout(std430, set = 0, binding = 3) writeonly buffer RBuffer { float r[]; } R;
layout(push_constant) uniform Push {
  uint x_at, g_at, y_at, rstd_at, has_rstd, rows, n;
  float eps;
} p;

#define SUM_T float
#include "row_sum.glsl"

void main() {
  const uint row = group_index();
  if (row >= p.rows) return;
  const uint t = gl_LocalInvocationID.x, x0 = p.x_at + row * p.n, y0 = p.y_at + row * p.n;
  const uint last = last_block(p.n);
  float s = 0.0;
  for (uint k = t; k < last; k += BLOCK) {
    float v[PER];
    [[unroll]] for (uint j = 0u; j < PER; ++j) v[j] = X.x[x0 + k + j * WG];
    [[unroll]] for (uint j = 0u; j < PER; ++j) s = fma(v[j], v[j], s);
  }
  float v[PER], g[PER];  // the last block's x and gains (0 past the row)
  [[unroll]] for (uint j = 0u; j < PER; ++j) {
    const uint k = last + t + j * WG;
    v[j] = g[j] = 0.0;
    if (k < p.n) {
      v[j] = X.x[x0 + k];
      g[j] = G.g[p.g_at + k];
    }
  }
  [[unroll]] for (uint j = 0u; j < PER; ++j) s = fma(v[j], v[j], s);
  const float rstd = 1.0 / sqrt(row_sum(s) / float(p.n) + p.eps);
  [[unroll]] for (uint j = 0u; j < PER; ++j)
    if (last + t + j * WG < p.n) Y.y[y0 + last + t + j * WG] = v[j] * rstd * g[j];
  for (uint k = t; k < last; k += BLOCK) {
    [[unroll]] for (uint j = 0u; j < PER; ++j) {
      v[j] = X.x[x0 + k + j * WG];
      g[j] = G.g[p.g_at + k + j * WG];
    }
    [[unroll]] for (uint j = 0u; j < PER; ++j) Y.y[y0 + k + j * WG] = v[j] * rstd * g[j];
  }
  if (t == 0u && p.has_rstd != 0u) R.r[p.rstd_at + row] = rstd;
}
