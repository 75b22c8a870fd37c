// Element-wise ops over n floats, one per invocation: OP 0 add (y += x), 1 scale (y = s x),
// 2 SwiGLU (y = silu(a) * b, kernels/ops.h).
#version 450
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) buffer YBuffer { float y[]; } Y;
layout(std430, set = 0, binding = 1) readonly buffer ABuffer { float a[]; } A;
layout(std430, set = 0, binding = 2) readonly buffer BBuffer { float b[]; } B;
layout(push_constant) uniform Push {
  uint y_at, a_at, b_at, n;
  float s;
} p;

void main() {
  const uint i = group_index() * 256u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
#if OP == 0
  Y.y[p.y_at + i] += A.a[p.a_at + i];
#elif OP == 1
  Y.y[p.y_at + i] = p.s * A.a[p.a_at + i];
#else
  const float g = A.a[p.a_at + i];
  Y.y[p.y_at + i] = g / (1.0 + exp(-g)) * B.b[p.b_at + i];
#endif
}
