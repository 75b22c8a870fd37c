// Split-K's second pass (matmul_coopmat.comp, ops_matmul.cpp gemm_slices): each output the sum of
// its slices' partial sums in slice order, into y (added to it with accumulate).
#version 450
#include "common.glsl"

#define WG 256
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer PartBuffer { float f[]; } Part;
layout(std430, set = 0, binding = 1) buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint rows, n, slices, slice_floats;  // the partial sums: [slice][n][rows]
  uint y_at, y_stride, accumulate;
} p;

void main() {
  const uint e = group_index() * WG + gl_LocalInvocationID.x;
  if (e >= p.n * p.rows) return;
  float sum = Part.f[e];
  for (uint s = 1u; s < p.slices; ++s) sum += Part.f[s * p.slice_floats + e];
  const uint at = p.y_at + (e / p.rows) * p.y_stride + e % p.rows;
  Y.y[at] = p.accumulate != 0u ? Y.y[at] + sum : sum;
}
