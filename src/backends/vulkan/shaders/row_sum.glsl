// The sum over a workgroup of one SUM_T (float, vec3) from each of its WG threads, every thread
// getting the same bits: thread t < G = WG / 16 adds partials t, t + G, t + 2G, ... (16, in that
// order: consecutive threads read consecutive banks), then every thread adds the G sums in order.
// The order depends on WG alone (no subgroup operations, so no device's subgroup size enters it);
// a thread adds at most 16 + G values, after two barriers (lavapipe switches between its
// invocations at each). A call may follow another at once: a thread writes partials (and sums)
// only after every thread has passed the barrier that follows their last reads.
#if WG % 16 != 0
#error row_sum.glsl sums groups of 16 threads
#endif
shared SUM_T partials[WG];
shared SUM_T sums[WG / 16u];

SUM_T row_sum(SUM_T s) {
  const uint t = gl_LocalInvocationID.x;
  partials[t] = s;
  barrier();
  if (t < WG / 16u) {
    SUM_T g = SUM_T(0.0);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) g += partials[t + WG / 16u * j];
    sums[t] = g;
  }
  barrier();
  SUM_T total = SUM_T(0.0);
  [[unroll]] for (uint i = 0u; i < WG / 16u; ++i) total += sums[i];
  return total;
}
