// Mamba-1's causal depthwise conv1d with its bias and SiLU (kernels/mamba.h), one invocation per
// (sequence, channel), sequential over the sequence's T tokens: u[t, c] = silu(bias[c] +
// sum_j w[c, j] in(t - K + 1 + j)), the inputs before the call from its window [K - 1, E], which
// it then advances. The prompt form is one sequence of T tokens (window at win_at); the step form
// `rows` sequences of one token each (row r's window at slots[r] (K - 1) E). Both run this code,
// so a prompt continued step by step gives the prompt's bits. A row whose slot is outside the
// pool's `slot_count` windows is skipped (its u left as it was).
#version 450
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer XBuffer { float x[]; } X;
layout(std430, set = 0, binding = 1) readonly buffer WBuffer { float w[]; } Wt;
layout(std430, set = 0, binding = 2) readonly buffer BBuffer { float b[]; } Bias;
layout(std430, set = 0, binding = 3) buffer WinBuffer { float w[]; } Win;
layout(std430, set = 0, binding = 4) readonly buffer SlotBuffer { int i[]; } Slots;
layout(std430, set = 0, binding = 5) writeonly buffer UBuffer { float u[]; } U;
layout(push_constant) uniform Push {
  uint x_at, ld_x, w_at, bias_at, win_at, slots_at, u_at;
  uint use_slots, slot_count, rows, T, E, K;
} p;

float silu(float v) { return v / (1.0 + exp(-v)); }

void main() {
  const uint i = group_index() * 64u + gl_LocalInvocationID.x;
  if (i >= p.rows * p.E) return;
  const uint r = i / p.E, c = i % p.E, K = p.K, E = p.E;
  const int slot = p.use_slots != 0u ? Slots.i[p.slots_at + r] : 0;
  if (slot < 0 || uint(slot) >= p.slot_count) return;
  const uint win = p.win_at + uint(slot) * (K - 1u) * E;
  const uint x0 = p.x_at + r * p.T * p.ld_x + c;  // token t of this row: x0 + t ld_x
  const int T = int(p.T), k = int(K);
  for (int t = 0; t < T; ++t) {
    float acc = Bias.b[p.bias_at + c];
    for (int j = 0; j < k; ++j) {
      const int src = t - k + 1 + j;  // < 0: from before this call
      const float v = src < 0 ? Win.w[win + uint(k - 1 + src) * E + c] : X.x[x0 + uint(src) * p.ld_x];
      acc = fma(Wt.w[p.w_at + c * K + uint(j)], v, acc);
    }
    U.u[p.u_at + (r * p.T + uint(t)) * E + c] = silu(acc);
  }
  // The new window: the last K - 1 inputs of (old window, x); in place, each read after it is
  // written only where j + T > j.
  for (int j = 0; j < k - 1; ++j) {
    const int src = T - k + 1 + j;
    Win.w[win + uint(j) * E + c] = src < 0 ? Win.w[win + uint(j + T) * E + c] : X.x[x0 + uint(src) * p.ld_x];
  }
}
