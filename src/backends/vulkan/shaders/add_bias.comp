// A projection's bias (kernels/bias.h): y[r, c] += bias[c] over rows of width cols, one element
// per invocation.
#version 450
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) buffer YBuffer { float y[]; } Y;
layout(std430, set = 0, binding = 1) readonly buffer BBuffer { float b[]; } Bias;
layout(push_constant) uniform Push {
  uint y_at, bias_at, n, cols;
} p;

void main() {
  const uint i = group_index() * 256u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  Y.y[p.y_at + i] += Bias.b[p.bias_at + i % p.cols];
}
