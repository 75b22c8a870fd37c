// The decode GEMV's reads (matmul_gemv.comp): a unit is UNIT consecutive weights of a row that
// one thread takes with a few wide loads, 16 bytes at a time where the bytes are 16-byte aligned:
// 8 weights of the float types, a 32-weight block of Q8_0 / Q4_0, a 64-weight group of a Q4_K
// super-block. The including shader declares W (uint w[]) and W4 (uvec4 w4[]) on the weights'
// binding and WTYPE, and includes weights.glsl first. A unit is read (load_unit) apart from its
// use (decode_unit), so that a thread can have several units' loads in flight. The values are
// those of weights.glsl's dequant8, bit for bit (the same expressions).
#if WTYPE <= 2
#define UNIT 8u
#define RAW 8   // words: F32 needs 8, BF16/F16 the first 4
#elif WTYPE <= 4
#define UNIT 32u
#define RAW 9   // Q8_0: 34 bytes from a 2-aligned start; Q4_0: 18 bytes in the first 5
#else
#define UNIT 64u
#define RAW 12  // Q4_K: the super-block's 16-byte head, then the group's 32 bytes of nibbles
#endif

// The 16 bytes at byte i (i 2-aligned): one wide load where i is 16-aligned, which it always is
// when the including shader defines ALIGNED (every row starts 16-byte aligned, units are 16 bytes).
uvec4 w_load16(uint i) {
#if ALIGNED
  return W4.w4[i >> 4];
#else
  if ((i & 15u) == 0u) return W4.w4[i >> 4];
  if ((i & 3u) == 0u) return uvec4(W.w[i >> 2], W.w[(i >> 2) + 1u], W.w[(i >> 2) + 2u], W.w[(i >> 2) + 3u]);
  return uvec4(w_u32(i), w_u32(i + 4u), w_u32(i + 8u), w_u32(i + 12u));
#endif
}

// Byte of unit u of the row at byte `row` (Q4_K: of its super-block).
uint unit_byte(uint row, uint u) {
#if WTYPE == 0
  return row + 32u * u;
#elif WTYPE <= 2
  return row + 16u * u;
#elif WTYPE == 3
  return row + 34u * u;
#elif WTYPE == 4
  return row + 18u * u;
#else
  return row + 144u * (u >> 2);
#endif
}

// The raw words of unit u (a whole unit: the float types' last, partial one goes through dequant8).
void load_unit(uint row, uint u, out uint raw[RAW]) {
  const uint at = unit_byte(row, u);
#if WTYPE == 0
  const uvec4 a = w_load16(at), b = w_load16(at + 16u);
  raw = uint[RAW](a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
#elif WTYPE <= 2
  const uvec4 a = w_load16(at);
  raw = uint[RAW](a.x, a.y, a.z, a.w, 0u, 0u, 0u, 0u);
#elif WTYPE == 3 || WTYPE == 4
  // Every word that holds a byte of the block (5 or 9 of them), from the one holding its first.
  const uint first = at >> 2;
  [[unroll]] for (uint j = 0u; j < uint(RAW); ++j) raw[j] = (WTYPE == 3 || j < 5u) ? W.w[first + j] : 0u;
#else
  const uvec4 head = w_load16(at), lo = w_load16(at + 16u + 32u * (u & 3u)), hi = w_load16(at + 32u + 32u * (u & 3u));
  raw = uint[RAW](head.x, head.y, head.z, head.w, lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
#endif
}

// Unit u's weights (v[q] = weights 4q .. 4q + 3), from its raw words.
void decode_unit(const uint raw[RAW], uint row, uint u, out vec4 v[UNIT / 4u]) {
#if WTYPE == 0
  [[unroll]] for (uint q = 0u; q < 2u; ++q)
    v[q] = uintBitsToFloat(uvec4(raw[4u * q], raw[4u * q + 1u], raw[4u * q + 2u], raw[4u * q + 3u]));
#elif WTYPE == 1
  [[unroll]] for (uint q = 0u; q < 2u; ++q)
    v[q] = vec4(bf16_low(raw[2u * q]), bf16_high(raw[2u * q]), bf16_low(raw[2u * q + 1u]), bf16_high(raw[2u * q + 1u]));
#elif WTYPE == 2
  [[unroll]] for (uint q = 0u; q < 2u; ++q) v[q] = vec4(unpackHalf2x16(raw[2u * q]), unpackHalf2x16(raw[2u * q + 1u]));
#elif WTYPE == 3
  // Q8_0: an F16 scale, 32 signed bytes (bytes 2 .. 33 of the block).
  const uint o = unit_byte(row, u) & 3u;
  const float d = unpackHalf2x16(o == 0u ? raw[0] : raw[0] >> 16).x;
  [[unroll]] for (uint q = 0u; q < 8u; ++q) {
    // The 4 signed bytes at block bytes 2 + 4q .. 5 + 4q.
    const uint b = o == 0u ? (raw[q] >> 16) | (raw[q + 1u] << 16) : raw[q + 1u];
    [[unroll]] for (uint j = 0u; j < 4u; ++j) v[q][j] = d * float(bitfieldExtract(int(b), int(8u * j), 8));
  }
#elif WTYPE == 4
  // Q4_0: an F16 scale and 16 bytes; byte j holds weight j (low nibble) and weight j + 16 (high).
  const uint o = unit_byte(row, u) & 3u;
  const float d = unpackHalf2x16(o == 0u ? raw[0] : raw[0] >> 16).x;
  [[unroll]] for (uint q = 0u; q < 4u; ++q) {
    // Block bytes 2 + 4q .. 5 + 4q: weights 4q .. 4q + 3 and 16 + 4q .. 19 + 4q.
    const uint b = o == 0u ? (raw[q] >> 16) | (raw[q + 1u] << 16) : raw[q + 1u];
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      v[q][j] = d * (float((b >> (8u * j)) & 15u) - 8.0);
      v[q + 4u][j] = d * (float((b >> (8u * j + 4u)) & 15u) - 8.0);
    }
  }
#else
  // Q4_K group g of its super-block: weights 64g .. 64g + 31 are sub-block 2g (low nibbles),
  // 64g + 32 .. 64g + 63 sub-block 2g + 1 (high nibbles) of the same 32 bytes; w = d s q - dmin m.
  const uint g = u & 3u;
  const vec2 dm = unpackHalf2x16(raw[0]);
  [[unroll]] for (uint part = 0u; part < 2u; ++part) {
    const uvec2 sm = q4k_scale_min(2u * g + part, uint[3](raw[1], raw[2], raw[3]));
    const float ds = dm.x * float(sm.x), dmin = dm.y * float(sm.y);
    const uint shift = 4u * part;
    [[unroll]] for (uint q = 0u; q < 8u; ++q) {
      const uint b = raw[4u + q];  // nibble bytes 4q .. 4q + 3
      [[unroll]] for (uint i = 0u; i < 4u; ++i) v[8u * part + q][i] = ds * float((b >> (8u * i + shift)) & 15u) - dmin;
    }
  }
#endif
}
