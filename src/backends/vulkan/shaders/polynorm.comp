// Motif's PolyNorm gate (kernels/polynorm.h): per row of F, with z the gate row and
// rho(u) = sqrt(mean(u^2) + eps),
//   h = (w0 z^3 / rho(z^3) + w1 z^2 / rho(z^2) + w2 z / rho(z) + b) * u,
// one workgroup per row.
#version 450
#include "common.glsl"

#define WG 128
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer GBuffer { float g[]; } G;
layout(std430, set = 0, binding = 1) readonly buffer UBuffer { float u[]; } U;
layout(std430, set = 0, binding = 2) readonly buffer WBuffer { float w[]; } Wt;
layout(std430, set = 0, binding = 3) readonly buffer BBuffer { float b[]; } Bias;
layout(std430, set = 0, binding = 4) writeonly buffer HBuffer { float h[]; } H;
layout(push_constant) uniform Push {
  uint g_at, u_at, w_at, b_at, h_at, rows, F;
  float eps;
} p;

shared vec3 partial[WG];

void main() {
  const uint row = group_index();
  if (row >= p.rows) return;
  const uint t = gl_LocalInvocationID.x, r0 = row * p.F;
  vec3 s = vec3(0.0);  // sums of z^6, z^4, z^2
  for (uint k = t; k < p.F; k += WG) {
    const float z = G.g[p.g_at + r0 + k], z2 = z * z;
    s += vec3(z2 * z2 * z2, z2 * z2, z2);
  }
  partial[t] = s;
  barrier();
  vec3 sum = vec3(0.0);  // every thread adds the partials in the same order: one barrier
  for (uint j = 0u; j < WG; ++j) sum += partial[j];
  const vec3 inv = 1.0 / sqrt(sum / float(p.F) + p.eps);
  const vec3 c = vec3(Wt.w[p.w_at], Wt.w[p.w_at + 1u], Wt.w[p.w_at + 2u]) * inv;
  const float bias = Bias.b[p.b_at];
  for (uint k = t; k < p.F; k += WG) {
    const float z = G.g[p.g_at + r0 + k];
    H.h[p.h_at + r0 + k] = (c.x * z * z * z + c.y * z * z + c.z * z + bias) * U.u[p.u_at + r0 + k];
  }
}
