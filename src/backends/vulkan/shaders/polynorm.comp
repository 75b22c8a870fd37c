// Motif's PolyNorm gate (kernels/polynorm.h): per row of F, with z the gate row and
// rho(u) = sqrt(mean(u^2) + eps),
//   h = (w0 z^3 / rho(z^3) + w1 z^2 / rho(z^2) + w2 z / rho(z) + b) * u,
// one workgroup per row, read as norm_block.glsl says (the last block's u loaded beside its z).
#version 450
#include "common.glsl"
#include "norm_block.glsl"

layout(std430, set = 0, binding = 0) readonly buffer GBuffer { float g[]; } G;
layout(std430, set = 0, binding = 1) readonly buffer UBuffer { float u[]; } U;
layout(std430, set = 0, binding = 2) readonly buffer WBuffer { float w[]; } Wt;
layout(std430, set = 0, binding = 3) readonly buffer BBuffer { float b[]; } Bias;
layout(std430, set = 0, binding = 4) writeonly buffer HBuffer { float h[]; } H;
layout(push_constant) uniform Push {
  uint g_at, u_at, w_at, b_at, h_at, rows, F;
  float eps;
} p;

#define SUM_T vec3
#include "row_sum.glsl"

vec3 powers(float z) {  // z^6, z^4, z^2: the terms of the three sums
  const float z2 = z * z;
  return vec3(z2 * z2 * z2, z2 * z2, z2);
}

// h of one element from its gate z and up value u, c the weights over the powers' rho.
float gated(vec3 c, float bias, float z, float u) { return (c.x * z * z * z + c.y * z * z + c.z * z + bias) * u; }

void main() {
  const uint row = group_index();
  if (row >= p.rows) return;
  const uint t = gl_LocalInvocationID.x, r0 = row * p.F, last = last_block(p.F);
  const vec3 weights = vec3(Wt.w[p.w_at], Wt.w[p.w_at + 1u], Wt.w[p.w_at + 2u]);
  const float bias = Bias.b[p.b_at];
  vec3 s = vec3(0.0);
  for (uint k = t; k < last; k += BLOCK) {
    float z[PER];
    [[unroll]] for (uint j = 0u; j < PER; ++j) z[j] = G.g[p.g_at + r0 + k + j * WG];
    [[unroll]] for (uint j = 0u; j < PER; ++j) s += powers(z[j]);
  }
  float z[PER], u[PER];  // the last block's gate and up values (0 past the row)
  [[unroll]] for (uint j = 0u; j < PER; ++j) {
    const uint k = last + t + j * WG;
    z[j] = u[j] = 0.0;
    if (k < p.F) {
      z[j] = G.g[p.g_at + r0 + k];
      u[j] = U.u[p.u_at + r0 + k];
    }
  }
  [[unroll]] for (uint j = 0u; j < PER; ++j) s += powers(z[j]);
  const vec3 inv = 1.0 / sqrt(row_sum(s) / float(p.F) + p.eps), c = weights * inv;
  [[unroll]] for (uint j = 0u; j < PER; ++j)
    if (last + t + j * WG < p.F) H.h[p.h_at + r0 + last + t + j * WG] = gated(c, bias, z[j], u[j]);
  for (uint k = t; k < last; k += BLOCK) {
    [[unroll]] for (uint j = 0u; j < PER; ++j) {
      z[j] = G.g[p.g_at + r0 + k + j * WG];
      u[j] = U.u[p.u_at + r0 + k + j * WG];
    }
    [[unroll]] for (uint j = 0u; j < PER; ++j) H.h[p.h_at + r0 + k + j * WG] = gated(c, bias, z[j], u[j]);
  }
}
