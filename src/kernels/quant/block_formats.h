// GGML's quantized block layouts (ggml-common.h), restated from their definitions; every
// multi-byte field is little-endian and the structs have no padding (checked below), so a row
// of blocks is the exact byte sequence of a GGUF tensor row. docs/FORMATS.md has the tables.
#pragma once
#include <cstdint>
#include <cstring>

namespace difftx::kernels {

// Q8_0: 32 weights, w = d * q with q in [-127, 127] (the reference quantizer never writes -128,
// decoding accepts it).
constexpr int64_t kQ8_0Weights = 32;
struct BlockQ8_0 {
  uint16_t d;  // F16 scale
  int8_t qs[kQ8_0Weights];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_0: 32 weights, w = d * (q - 8) with q in [0, 15]. Byte j (0..15) holds weight j in its
// low nibble and weight j + 16 in its high nibble.
constexpr int64_t kQ4_0Weights = 32;
struct BlockQ4_0 {
  uint16_t d;  // F16 scale
  uint8_t qs[kQ4_0Weights / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q4_K: a super-block of 256 weights in 8 sub-blocks of 32; sub-block j has a 6-bit scale s_j
// and a 6-bit minimum m_j, and w = d * s_j * q - dmin * m_j with q in [0, 15]. The 4 x 64
// weights of group g use bytes qs[32g .. 32g + 31]: weight 64g + l in the low nibble of byte
// 32g + l (sub-block 2g), weight 64g + 32 + l in its high nibble (sub-block 2g + 1).
constexpr int64_t kQ4_KWeights = 256;
constexpr int kQ4_KSubBlocks = 8;
struct BlockQ4_K {
  uint16_t d;     // F16 scale of the sub-block scales
  uint16_t dmin;  // F16 scale of the sub-block minimums
  uint8_t scales[12];
  uint8_t qs[kQ4_KWeights / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

// The 12 scale bytes: for j < 4, s_j is the low 6 bits of byte j and m_j of byte j + 4; for
// j >= 4, byte j + 4 holds the low 4 bits of s_j (low nibble) and of m_j (high nibble), and
// their top 2 bits are the top 2 bits of byte j - 4 (s_j) and of byte j (m_j).
struct ScaleMin {
  uint8_t scale, min;
};
inline ScaleMin q4_k_scale_min(const uint8_t* scales, int j) {
  if (j < 4) return {static_cast<uint8_t>(scales[j] & 63), static_cast<uint8_t>(scales[j + 4] & 63)};
  return {static_cast<uint8_t>((scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4)),
          static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4))};
}
inline void q4_k_set_scale_min(uint8_t* scales, int j, uint8_t scale, uint8_t min) {
  if (j < 4) {
    scales[j] = static_cast<uint8_t>((scales[j] & 0xC0) | scale);
    scales[j + 4] = static_cast<uint8_t>((scales[j + 4] & 0xC0) | min);
  } else {
    scales[j + 4] = static_cast<uint8_t>((scale & 0xF) | ((min & 0xF) << 4));
    scales[j - 4] = static_cast<uint8_t>((scales[j - 4] & 63) | ((scale >> 4) << 6));
    scales[j] = static_cast<uint8_t>((scales[j] & 63) | ((min >> 4) << 6));
  }
}

// All 8 scales and 8 minimums of a super-block at once, four bytes per 32-bit word (the SIMD
// kernels load them as one vector): bytes 0-3 hold s_0..s_3 (low 6 bits), 4-7 m_0..m_3, 8-11
// the low nibbles of s_4..s_7 and m_4..m_7, and the top 2 bits of bytes 0-3 / 4-7 the top bits
// of s_4..s_7 / m_4..m_7. out = s_0..s_7, m_0..m_7.
inline void q4_k_scales_and_mins(const uint8_t* scales, uint8_t (&out)[16]) {
  uint32_t w[3];
  std::memcpy(w, scales, 12);  // little-endian words (x86-64, ARM64)
  const uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, top2 = 0x03030303;
  const uint32_t words[4] = {w[0] & low6, (w[2] & low4) | (((w[0] >> 6) & top2) << 4), w[1] & low6,
                             ((w[2] >> 4) & low4) | (((w[1] >> 6) & top2) << 4)};
  std::memcpy(out, words, 16);
}

}  // namespace difftx::kernels
