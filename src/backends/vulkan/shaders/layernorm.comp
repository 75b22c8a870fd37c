// LayerNorm with a bias (kernels/layernorm.h): y = (x - mean) * rstd * w + b per row of n, rstd =
// 1 / sqrt(mean((x - mean)^2) + eps), one workgroup per row; two passes over the row (the
// variance of the centred values, as the CPU kernel), mean and rstd of the row kept.
#version 450
#include "common.glsl"

#define WG 128
layout(local_size_x = WG) in;
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

shared float sums[WG];
shared float squares[WG];

// The sum of one partial per thread, every thread adding them in the same order.
float total(uint which) {
  float s = 0.0;
  for (uint j = 0u; j < WG; ++j) s += which == 0u ? sums[j] : squares[j];
  return s;
}

void main() {
  const uint row = group_index();
  if (row >= p.rows) return;
  const uint t = gl_LocalInvocationID.x, x0 = p.x_at + row * p.n;
  float s = 0.0;
  for (uint k = t; k < p.n; k += WG) s += X.x[x0 + k];
  sums[t] = s;
  barrier();
  const float mean = total(0u) / float(p.n);
  float q = 0.0;
  for (uint k = t; k < p.n; k += WG) {
    const float c = X.x[x0 + k] - mean;
    q = fma(c, c, q);
  }
  squares[t] = q;
  barrier();
  const float rstd = 1.0 / sqrt(total(1u) / float(p.n) + p.eps);
  for (uint k = t; k < p.n; k += WG)
    Y.y[p.y_at + row * p.n + k] = (X.x[x0 + k] - mean) * rstd * W.w[p.w_at + k] + B.b[p.b_at + k];
  if (t == 0u) {
    Mean.m[p.mean_at + row] = mean;
    Rstd.r[p.rstd_at + row] = rstd;
  }
}
