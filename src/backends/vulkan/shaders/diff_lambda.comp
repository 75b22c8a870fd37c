// DIFF's lambda (docs/SPEC.md §2.2 Eq. 2): out = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init,
// the dots over d in double where the device has shaderFloat64 (FLOAT64 = 1), else in float;
// lambda_init arrives as two floats whose sum is the double.
#version 450
#include "common.glsl"

#if FLOAT64
#define real double
#else
#define real float
#endif
#define WG 64
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer Q1 { float v[]; } LQ1;
layout(std430, set = 0, binding = 1) readonly buffer K1 { float v[]; } LK1;
layout(std430, set = 0, binding = 2) readonly buffer Q2 { float v[]; } LQ2;
layout(std430, set = 0, binding = 3) readonly buffer K2 { float v[]; } LK2;
layout(std430, set = 0, binding = 4) writeonly buffer OutBuffer { float v[]; } Out;
layout(push_constant) uniform Push {
  uint q1_at, k1_at, q2_at, k2_at, out_at, d;
  float init_high, init_low;
} p;

shared real partial[2][WG];

void main() {
  const uint t = gl_LocalInvocationID.x;
  real a = real(0), b = real(0);
  for (uint k = t; k < p.d; k += WG) {
    a += real(LQ1.v[p.q1_at + k]) * real(LK1.v[p.k1_at + k]);
    b += real(LQ2.v[p.q2_at + k]) * real(LK2.v[p.k2_at + k]);
  }
  partial[0][t] = a;
  partial[1][t] = b;
  [[unroll]] for (uint half_ = WG / 2; half_ > 0u; half_ >>= 1) {
    barrier();
    if (t < half_) {
      partial[0][t] += partial[0][t + half_];
      partial[1][t] += partial[1][t + half_];
    }
  }
  barrier();
  if (t == 0u) {
    // exp in float (GLSL has no double exp): the dots are O(1), so its rounding is the float
    // result's own; the sum is formed in `real`.
    const real e1 = real(exp(float(partial[0][0]))), e2 = real(exp(float(partial[1][0])));
    Out.v[p.out_at] = float(e1 - e2 + (real(p.init_high) + real(p.init_low)));
  }
}
