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
float w_f16(uint i) { return unpackHalf2x16(w_u16(i)).x; }

// Sub-block j's (of 8) 6-bit scale and minimum in a Q4_K super-block, from its 12 bytes of them
// (the block's bytes 4 .. 15, as 3 little-endian words).
uvec2 q4k_scale_min(uint j, const uint words[3]) {
  uint b[12];
  [[unroll]] for (uint i = 0u; i < 12u; ++i) b[i] = (words[i / 4u] >> (8u * (i % 4u))) & 0xffu;
  if (j < 4u) return uvec2(b[j] & 63u, b[j + 4u] & 63u);
  return uvec2((b[j + 4u] & 15u) | ((b[j - 4u] >> 6) << 4), (b[j + 4u] >> 4) | ((b[j] >> 6) << 4));
}

// Weight k of the row at byte `row`, for the float types.
float dequant1(uint row, uint k) {
#if WTYPE == 0
  return uintBitsToFloat(W.w[(row >> 2) + k]);
#elif WTYPE == 1
  return uintBitsToFloat(w_u16(row + 2u * k) << 16);
#elif WTYPE == 2
  return w_f16(row + 2u * k);
#else
  return 0.0;  // block types are read 8 at a time
#endif
}

// Weights k .. k + 7 of the row at byte `row` (k a multiple of 8); past `cols` (float types'
// last unit) they are 0 and nothing beyond the row is read.
void dequant8(uint row, uint k, uint cols, out float v[8]) {
#if WTYPE <= 2
  if (k + 8u > cols) {
    [[unroll]] for (uint j = 0u; j < 8u; ++j) v[j] = k + j < cols ? dequant1(row, k + j) : 0.0;
    return;
  }
#endif
#if WTYPE == 0
  const uint at = (row >> 2) + k;
  [[unroll]] for (uint j = 0u; j < 8u; ++j) v[j] = uintBitsToFloat(W.w[at + j]);
#elif WTYPE == 1 || WTYPE == 2
  const uint at = row + 2u * k;  // 2 mod 4 in every other row when cols is odd
  const bool aligned = (at & 3u) == 0u;
  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    const uint pair = aligned ? W.w[(at >> 2) + j] : w_u32(at + 4u * j);
#if WTYPE == 1
    v[2u * j] = bf16_low(pair);
    v[2u * j + 1u] = bf16_high(pair);
#else
    const vec2 h = unpackHalf2x16(pair);
    v[2u * j] = h.x;
    v[2u * j + 1u] = h.y;
#endif
  }
#elif WTYPE == 3
  // Q8_0: 34-byte blocks of an F16 scale and 32 signed bytes.
  const uint block = row + (k >> 5) * 34u;
  const float d = w_f16(block);
  const uint q0 = w_u32(block + 2u + (k & 31u)), q1 = w_u32(block + 6u + (k & 31u));
  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    v[j] = d * float(bitfieldExtract(int(q0), int(8u * j), 8));
    v[4u + j] = d * float(bitfieldExtract(int(q1), int(8u * j), 8));
  }
#elif WTYPE == 4
  // Q4_0: 18-byte blocks of an F16 scale and 16 bytes; byte j holds weight j (low nibble) and
  // weight j + 16 (high nibble), w = d (q - 8).
  const uint block = row + (k >> 5) * 18u;
  const float d = w_f16(block);
  const uint within = k & 31u;
  const uint byte0 = block + 2u + (within & 15u), shift = within >= 16u ? 4u : 0u;
  const uint q0 = w_u32(byte0), q1 = w_u32(byte0 + 4u);
  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    v[j] = d * (float((q0 >> (8u * j + shift)) & 15u) - 8.0);
    v[4u + j] = d * (float((q1 >> (8u * j + shift)) & 15u) - 8.0);
  }
#elif WTYPE == 5
  // Q4_K: 144-byte super-blocks of 256 weights: F16 d and dmin, 12 bytes of 6-bit scales and
  // minimums, 128 bytes of nibbles; w = d s_j q - dmin m_j for sub-block j of 32.
  const uint block = row + (k >> 8) * 144u;
  const uint w = k & 255u, g = w >> 6, l = w & 63u;
  const uint j = 2u * g + (l >= 32u ? 1u : 0u);
  const uint at = block >> 2;  // the block is 4-byte aligned
  const vec2 dm = unpackHalf2x16(W.w[at]);  // d, dmin
  const uvec2 sm = q4k_scale_min(j, uint[3](W.w[at + 1u], W.w[at + 2u], W.w[at + 3u]));
  const float ds = dm.x * float(sm.x), dmin = dm.y * float(sm.y);
  const uint byte0 = block + 16u + 32u * g + (l & 31u), shift = l >= 32u ? 4u : 0u;
  const uint q0 = W.w[byte0 >> 2], q1 = W.w[(byte0 >> 2) + 1u];  // 8-aligned: l & 31 is a multiple of 8
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    v[i] = ds * float((q0 >> (8u * i + shift)) & 15u) - dmin;
    v[4u + i] = ds * float((q1 >> (8u * i + shift)) & 15u) - dmin;
  }
#endif
}
