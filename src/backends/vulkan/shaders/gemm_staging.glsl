// The prefill GEMMs' tiles (matmul_gemm.comp, matmul_coopmat.comp): BM rows of x and BN weight
// rows, BK = 32 columns at a time, read from memory into registers (load_tiles) while the
// previous tiles are multiplied, then widened and written to shared memory (store_tiles) through
// the including shader's STORE_X(m, k, value) and STORE_W(c, k, value). The registers hold the
// loads' words untouched (weights.glsl's load8), so no use of them waits for memory before the
// products that the loads are meant to overlap. Consecutive threads read
// consecutive bytes: 8 threads take a row of x's tile as 8 vec4s, 4 threads a weight row's tile
// as 4 units of 8 (weights.glsl's dequant8). Outside x's rows or the matrix, and past cols, the
// tiles hold 0. The including shader declares W, X and X4 (X as vec4s on the same binding), p,
// BM, BN, BK and WG (threads), and includes weights.glsl first.
#define X_LOADS ((BM * BK / 4u + WG - 1u) / WG)  // vec4s of x a thread reads per tile
#define W_LOADS ((BN * BK / 8u + WG - 1u) / WG)  // units of 8 weights

vec4 x_regs[X_LOADS];
uint w_regs[W_LOADS][RAW8];

void load_tiles(uint m0, uint c0, uint k0) {
  const uint t = gl_LocalInvocationID.x;
  const bool x_vec4 = ((p.x_at | p.cols) & 3u) == 0u;  // every row of x starts 16-byte aligned
  [[unroll]] for (uint i = 0u; i < X_LOADS; ++i) {
    const uint e = t + WG * i, m = m0 + e / 8u, k = k0 + 4u * (e % 8u);
    x_regs[i] = vec4(0.0);
    if (e < BM * BK / 4u && m < p.n) {
      const uint at = p.x_at + m * p.cols + k;
      if (x_vec4 && k + 4u <= p.cols) {
        x_regs[i] = X4.x4[at >> 2];
      } else {
        [[unroll]] for (uint j = 0u; j < 4u; ++j)
          if (k + j < p.cols) x_regs[i][j] = X.x[at + j];
      }
    }
  }
  [[unroll]] for (uint i = 0u; i < W_LOADS; ++i) {
    const uint e = t + WG * i, c = c0 + e / 4u, k = k0 + 8u * (e % 4u);
    if (e < BN * BK / 8u && c < p.rows && k < p.cols) load8(p.w_byte + c * p.row_bytes, k, p.cols, w_regs[i]);
  }
}

// The tiles load_tiles(m0, c0, k0) read.
void store_tiles(uint c0, uint k0) {
  const uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < X_LOADS; ++i) {
    const uint e = t + WG * i;
    if (e < BM * BK / 4u)
      [[unroll]] for (uint j = 0u; j < 4u; ++j) STORE_X(e / 8u, 4u * (e % 8u) + j, x_regs[i][j]);
  }
  [[unroll]] for (uint i = 0u; i < W_LOADS; ++i) {
    const uint e = t + WG * i, c = c0 + e / 4u, k = k0 + 8u * (e % 4u);
    if (e >= BN * BK / 8u) continue;
    float v[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    if (c < p.rows && k < p.cols) decode8(w_regs[i], p.w_byte + c * p.row_bytes, k, v);
    [[unroll]] for (uint j = 0u; j < 8u; ++j) STORE_W(e / 4u, 8u * (e % 4u) + j, v[j]);
  }
}
