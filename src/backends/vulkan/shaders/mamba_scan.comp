// Mamba-1's selective scan with the D skip (kernels/mamba.h), sequential over each sequence's T
// tokens and parallel over channels and state entries:
//   dt = softplus(dt_in[t, c] + dt_bias[c]),  A[c, n] = -exp(A_log[c, n]),
//   s[c, n] <- exp(dt A[c, n]) s[c, n] + dt B[t, n] u[t, c],  y[t, c] = sum_n C[t, n] s[c, n] + D[c] u[t, c].
// A channel's S entries are spread over `lanes` invocations (a power of two >= S, at most 64;
// lane l holds entries l, l + lanes, ...), so a workgroup of 64 holds 64 / lanes channels. Each
// invocation adds C s over its own entries; every TC tokens the channel's sums are added, lane
// by lane in order, from shared memory. The prompt form is one sequence of T tokens (state at
// state_at); the step form `rows` sequences of one token each (row r's state at slots[r] E S,
// rows whose slot is outside the pool's slot_count skipped). Both run this code with the same
// lanes, so a prompt continued step by step gives the prompt's bits.
#version 450
#include "common.glsl"

#define WG 64
#define TC 16    // tokens between two reductions
#define SPT 4    // state entries per invocation: 256 (kMambaMostState) / 64
layout(local_size_x = WG) in;
layout(std430, set = 0, binding = 0) readonly buffer UBuffer { float u[]; } U;
layout(std430, set = 0, binding = 1) readonly buffer DtBuffer { float d[]; } Dt;
layout(std430, set = 0, binding = 2) readonly buffer DtBiasBuffer { float d[]; } DtBias;
layout(std430, set = 0, binding = 3) readonly buffer ALogBuffer { float a[]; } ALog;
layout(std430, set = 0, binding = 4) readonly buffer BBuffer { float b[]; } Bin;
layout(std430, set = 0, binding = 5) readonly buffer CBuffer { float c[]; } Cin;
layout(std430, set = 0, binding = 6) readonly buffer DBuffer { float d[]; } Dskip;
layout(std430, set = 0, binding = 7) buffer StateBuffer { float s[]; } State;
layout(std430, set = 0, binding = 8) readonly buffer SlotBuffer { int i[]; } Slots;
layout(std430, set = 0, binding = 9) writeonly buffer YBuffer { float y[]; } Y;
layout(push_constant) uniform Push {
  uint u_at, dt_at, dt_bias_at, a_log_at, b_at, c_at, ld_bc, d_at, state_at, slots_at, y_at;
  uint use_slots, slot_count, rows, T, E, S, lanes;
} p;

shared float partial[TC * WG];

// log(1 + z) for z in [0, 1]: 2 atanh(w), w = z / (2 + z) <= 1/3, by its series to w^17
// (relative error below 2e-10), accurate where log(1 + z) loses z's low bits.
float log1p_unit(float z) {
  const float w = z / (2.0 + z), w2 = w * w;
  float poly = 1.0 / 17.0;
  [[unroll]] for (int k = 15; k >= 1; k -= 2) poly = fma(poly, w2, 1.0 / float(k));
  return 2.0 * w * poly;
}
// PyTorch's softplus with its threshold 20, above which it is the identity.
float softplus(float x) {
  if (x > 20.0) return x;
  return x > 0.0 ? x + log1p_unit(exp(-x)) : log1p_unit(exp(x));
}

void main() {
  const uint t = gl_LocalInvocationID.x, per_group = WG / p.lanes;
  const uint groups_per_row = (p.E + per_group - 1u) / per_group, id = group_index();
  const uint r = id / groups_per_row;
  if (r >= p.rows) return;  // a whole workgroup: no barrier is skipped by part of one
  const uint E = p.E, S = p.S, lane = t % p.lanes, c = (id % groups_per_row) * per_group + t / p.lanes;
  const int slot = p.use_slots != 0u ? Slots.i[p.slots_at + r] : 0;
  const bool row_ok = slot >= 0 && uint(slot) < p.slot_count;  // the same for the whole workgroup
  if (!row_ok) return;
  const bool live = c < E;
  const uint state0 = p.state_at + uint(slot) * E * S + c * S;
  float s[SPT], A[SPT];
  [[unroll]] for (uint i = 0u; i < SPT; ++i) {
    const uint n = lane + i * p.lanes;
    const bool mine = live && n < S;
    s[i] = mine ? State.s[state0 + n] : 0.0;
    A[i] = mine ? -exp(ALog.a[p.a_log_at + c * S + n]) : 0.0;
  }
  const float dt_bias = live ? DtBias.d[p.dt_bias_at + c] : 0.0;
  for (uint t0 = 0u; t0 < p.T; t0 += TC) {
    const uint tc = min(TC, p.T - t0);
    for (uint k = 0u; k < tc; ++k) {
      const uint row = r * p.T + t0 + k;  // the token's row of u, dt_in, B, C and y
      float y = 0.0;
      if (live) {
        const float dt = softplus(Dt.d[p.dt_at + row * E + c] + dt_bias), du = dt * U.u[p.u_at + row * E + c];
        [[unroll]] for (uint i = 0u; i < SPT; ++i) {
          const uint n = lane + i * p.lanes;
          if (n < S) {
            s[i] = fma(exp(dt * A[i]), s[i], du * Bin.b[p.b_at + row * p.ld_bc + n]);
            y = fma(Cin.c[p.c_at + row * p.ld_bc + n], s[i], y);
          }
        }
      }
      partial[k * WG + t] = y;
    }
    barrier();
    // The channels' sums of these tokens: item e is (token e / per_group, channel e % per_group).
    for (uint e = t; e < tc * per_group; e += WG) {
      const uint k = e / per_group, g = e % per_group, cc = (id % groups_per_row) * per_group + g;
      if (cc >= E) continue;
      float y = 0.0;
      for (uint l = 0u; l < p.lanes; ++l) y += partial[k * WG + g * p.lanes + l];
      const uint row = r * p.T + t0 + k;
      const float u = U.u[p.u_at + row * E + cc];
      Y.y[p.y_at + row * E + cc] = fma(Dskip.d[p.d_at + cc], u, y);
    }
    barrier();
  }
  [[unroll]] for (uint i = 0u; i < SPT; ++i) {
    const uint n = lane + i * p.lanes;
    if (live && n < S) State.s[state0 + n] = s[i];
  }
}
