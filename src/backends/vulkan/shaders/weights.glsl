// Weights in their stored type (kernels/quant/weight_type.h; GGML's block layouts,
// kernels/quant/block_formats.h) widened to F32 in registers. The including shader declares the
// buffer W (uint w[]) and WTYPE: 0 F32, 1 BF16, 2 F16, 3 Q8_0, 4 Q4_0, 5 Q4_K. Addresses are
// bytes into W's binding; the matrix starts 4-byte aligned (the host checks), so every row
// starts 4-byte aligned except BF16/F16 rows of an odd width (2 mod 4) and Q8_0/Q4_0 rows of an
// odd number of blocks (2 mod 4).

// The 4 bytes at byte i (any alignment), little-endian; reads only words those bytes lie in.
uint w_u32(uint i) {
  const uint s = (i & 3u) << 3;
  const uint lo = W.w[i >> 2];
  return s == 0u ? lo : (lo >> s) | (W.w[(i >> 2) + 1u] << (32u - s));
}
uint w_u16(uint i) { return (W.w[i >> 2] >> ((i & 2u) << 3)) & 0xffffu; }  // i even

// Sub-block j's (of 8) 6-bit scale and minimum in a Q4_K super-block, from its 12 bytes of them
// (the block's bytes 4 .. 15, as 3 little-endian words).
uvec2 q4k_scale_min(uint j, const uint words[3]) {
  uint b[12];
  [[unroll]] for (uint i = 0u; i < 12u; ++i) b[i] = (words[i / 4u] >> (8u * (i % 4u))) & 0xffu;
  if (j < 4u) return uvec2(b[j] & 63u, b[j + 4u] & 63u);
  return uvec2((b[j + 4u] & 15u) | ((b[j - 4u] >> 6) << 4), (b[j + 4u] >> 4) | ((b[j] >> 6) << 4));
}

// Weights k .. k + 7 of the row at byte `row` (k a multiple of 8) are read as RAW8 words
// (load8) apart from their widening (decode8), so that a shader can have the next weights' loads
// in flight while it uses these: a load's value is not touched until decode8. Past `cols` (the
// float types' last unit) the weights are 0 and nothing beyond the row is read.
#if WTYPE == 0
#define RAW8 8  // the 8 floats
#elif WTYPE <= 2
#define RAW8 4  // 4 pairs
#elif WTYPE <= 4
#define RAW8 4  // the word holding the F16 scale, then the 3 words the 8 bytes of quants lie in
#else
#define RAW8 6  // d and dmin, the 3 words of scales and minimums, 2 words of nibbles
#endif

// The 8 bytes at byte i (i 2-aligned) as 2 words from the 3 (2 where i is 4-aligned) that hold
// them, raw[1 .. 3] as load8 read them.
uvec2 bytes8(const uint raw[RAW8], uint i) {
  const uint s = (i & 3u) << 3;
  if (s == 0u) return uvec2(raw[1], raw[2]);
  return uvec2((raw[1] >> s) | (raw[2] << (32u - s)), (raw[2] >> s) | (raw[3] << (32u - s)));
}

// Byte i's 2-byte element of the word holding it (i even).
uint half_of(uint word, uint i) { return (word >> ((i & 2u) << 3)) & 0xffffu; }

#if WTYPE == 3 || WTYPE == 4
// Where the 8 weights' quants start: Q8_0 34-byte blocks of an F16 scale and 32 signed bytes;
// Q4_0 18-byte blocks of an F16 scale and 16 bytes, byte j holding weight j (low nibble) and
// weight j + 16 (high nibble).
uint block_of(uint row, uint k) { return row + (k >> 5) * (WTYPE == 3 ? 34u : 18u); }
uint quants_of(uint row, uint k) { return block_of(row, k) + 2u + (WTYPE == 3 ? (k & 31u) : (k & 15u)); }
#elif WTYPE == 5
// Q4_K: 144-byte super-blocks of 256 weights (4-byte aligned): F16 d and dmin, 12 bytes of 6-bit
// scales and minimums, 128 bytes of nibbles; the 8 weights' nibbles are 8-byte aligned.
uint block_of(uint row, uint k) { return row + (k >> 8) * 144u; }
uint quants_of(uint row, uint k) { return block_of(row, k) + 16u + 32u * ((k & 255u) >> 6) + (k & 31u); }
#endif

void load8(uint row, uint k, uint cols, out uint raw[RAW8]) {
#if WTYPE == 0
  const uint at = (row >> 2) + k;
  [[unroll]] for (uint j = 0u; j < 8u; ++j) raw[j] = k + j < cols ? W.w[at + j] : 0u;
#elif WTYPE <= 2
  const uint at = row + 2u * k;  // 2 mod 4 in every other row when cols is odd
  if (k + 8u <= cols) {
    const bool aligned = (at & 3u) == 0u;
    [[unroll]] for (uint j = 0u; j < 4u; ++j) raw[j] = aligned ? W.w[(at >> 2) + j] : w_u32(at + 4u * j);
  } else {  // the row's last 1-7: each element from the word that holds it
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      const uint lo = k + 2u * j < cols ? w_u16(at + 4u * j) : 0u;
      const uint hi = k + 2u * j + 1u < cols ? w_u16(at + 4u * j + 2u) : 0u;
      raw[j] = lo | (hi << 16);
    }
  }
#elif WTYPE <= 4
  const uint q = quants_of(row, k);
  raw[0] = W.w[block_of(row, k) >> 2];
  raw[1] = W.w[q >> 2];
  raw[2] = W.w[(q >> 2) + 1u];
  raw[3] = (q & 3u) != 0u ? W.w[(q >> 2) + 2u] : 0u;
#else
  const uint at = block_of(row, k) >> 2, q = quants_of(row, k) >> 2;
  raw = uint[RAW8](W.w[at], W.w[at + 1u], W.w[at + 2u], W.w[at + 3u], W.w[q], W.w[q + 1u]);
#endif
}

void decode8(const uint raw[RAW8], uint row, uint k, out float v[8]) {
#if WTYPE == 0
  [[unroll]] for (uint j = 0u; j < 8u; ++j) v[j] = uintBitsToFloat(raw[j]);
#elif WTYPE <= 2
  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
#if WTYPE == 1
    v[2u * j] = bf16_low(raw[j]);
    v[2u * j + 1u] = bf16_high(raw[j]);
#else
    const vec2 h = unpackHalf2x16(raw[j]);
    v[2u * j] = h.x;
    v[2u * j + 1u] = h.y;
#endif
  }
#elif WTYPE <= 4
  const float d = unpackHalf2x16(half_of(raw[0], block_of(row, k))).x;
  const uvec2 q = bytes8(raw, quants_of(row, k));
#if WTYPE == 3
  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    v[j] = d * float(bitfieldExtract(int(q.x), int(8u * j), 8));
    v[4u + j] = d * float(bitfieldExtract(int(q.y), int(8u * j), 8));
  }
#else
  const uint shift = (k & 31u) >= 16u ? 4u : 0u;
  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    v[j] = d * (float((q.x >> (8u * j + shift)) & 15u) - 8.0);
    v[4u + j] = d * (float((q.y >> (8u * j + shift)) & 15u) - 8.0);
  }
#endif
#else
  // w = d s_j q - dmin m_j for sub-block j of 32.
  const uint l = k & 63u, j = 2u * ((k & 255u) >> 6) + (l >= 32u ? 1u : 0u), shift = l >= 32u ? 4u : 0u;
  const vec2 dm = unpackHalf2x16(raw[0]);  // d, dmin
  const uvec2 sm = q4k_scale_min(j, uint[3](raw[1], raw[2], raw[3]));
  const float ds = dm.x * float(sm.x), dmin = dm.y * float(sm.y);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    v[i] = ds * float((raw[4] >> (8u * i + shift)) & 15u) - dmin;
    v[4u + i] = ds * float((raw[5] >> (8u * i + shift)) & 15u) - dmin;
  }
#endif
}

void dequant8(uint row, uint k, uint cols, out float v[8]) {
  uint raw[RAW8];
  load8(row, k, cols, raw);
  decode8(raw, row, k, v);
}
