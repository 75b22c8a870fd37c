// LayerNorm with a bias (kernels/layernorm.h): y = (x - mean) * rstd * w + b per row of n, rstd =
// 1 / sqrt(mean((x - mean)^2) + eps), one workgroup per row; two passes over the row (the
// variance of the centred values, as the CPU kernel), mean and rstd of the row kept. The row is
// read in blocks as rmsnorm.comp reads it, its last block (with its weights and biases) kept in
// registers for the variance and the output.
#version 450
#include "common.glsl"
#include "norm_block.glsl"

layout(std430, set = 0, binding = 0) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer WBuffer { float w[]; } W;
layout(std430, set = 0, binding = 2) readonly buffer BBuffer { float b[]; } B;
layout(std430, set = 0, binding = 3) writeonly buffer YBuffer { float y[]; } Y;
layout(std430, set = 0, binding = 4) writeonly buffer MBuffer { float m[]; } Mean;
layout(std430, set = 0, binding = 5) writeonly buffer RBuffer { float r[]; } Rstd;
layout(push_constant) uniform Push {
  uint x_at, w_at, b_at, y_at, mean_at, rstd_at, rows, n;
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
    [[unroll]] for (uint j = 0u; j < PER; ++j) s += v[j];
  }
  float v[PER], w[PER], c[PER];  // the last block's x, weights and biases (0 past the row)
  [[unroll]] for (uint j = 0u; j < PER; ++j) {
    const uint k = last + t + j * WG;
    v[j] = w[j] = c[j] = 0.0;
    if (k < p.n) {
      v[j] = X.x[x0 + k];
      w[j] = W.w[p.w_at + k];
      c[j] = B.b[p.b_at + k];
    }
  }
  [[unroll]] for (uint j = 0u; j < PER; ++j) s += v[j];
  const float mean = row_sum(s) / float(p.n);
  float q = 0.0;
  for (uint k = t; k < last; k += BLOCK) {
    float u[PER];
    [[unroll]] for (uint j = 0u; j < PER; ++j) u[j] = X.x[x0 + k + j * WG] - mean;
    [[unroll]] for (uint j = 0u; j < PER; ++j) q = fma(u[j], u[j], q);
  }
  [[unroll]] for (uint j = 0u; j < PER; ++j) {
    const float u = v[j] - mean;
    if (last + t + j * WG < p.n) q = fma(u, u, q);
  }
  const float rstd = 1.0 / sqrt(row_sum(q) / float(p.n) + p.eps);
  [[unroll]] for (uint j = 0u; j < PER; ++j)
    if (last + t + j * WG < p.n) Y.y[y0 + last + t + j * WG] = (v[j] - mean) * rstd * w[j] + c[j];
  for (uint k = t; k < last; k += BLOCK) {
    [[unroll]] for (uint j = 0u; j < PER; ++j) {
      v[j] = X.x[x0 + k + j * WG];
      w[j] = W.w[p.w_at + k + j * WG];
      c[j] = B.b[p.b_at + k + j * WG];
    }
    [[unroll]] for (uint j = 0u; j < PER; ++j) Y.y[y0 + k + j * WG] = (v[j] - mean) * rstd * w[j] + c[j];
  }
  if (t == 0u) {
    Mean.m[p.mean_at + row] = mean;
    Rstd.r[p.rstd_at + row] = rstd;
  }
}
