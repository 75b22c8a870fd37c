// IEEE binary16 (F16) and bfloat16 (BF16) to and from float32. Both widen exactly: every value,
// including subnormals, infinities and NaN payloads (top bits), has a float32 twin. Narrowing
// rounds to nearest, ties to even; values beyond the type's range become infinities, NaN stays NaN.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace difftx::io {

inline float bf16_to_float(uint16_t bits) {
  // bfloat16 is the top half of a float32.
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

inline float f16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f)  // infinity or NaN: all-ones exponent, mantissa moved to the top
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)  // normal: rebias the exponent from 15 to 127
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // zero or subnormal: mantissa * 2^-24, exact in float32
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
}

inline uint16_t float_to_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round half to even on the dropped 16 bits
  return static_cast<uint16_t>(bits >> 16);
}

inline uint16_t float_to_f16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  bits &= 0x7fffffffu;
  if (bits > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (bits >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and beyond round to infinity
  if (bits < 0x38800000u) {                        // below 2^-14: an F16 subnormal (or zero)
    const float scaled = std::bit_cast<float>(bits) * 0x1p24f;  // exact: a change of exponent
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));  // ties to even (default mode)
  }
  bits += 0xfffu + ((bits >> 13) & 1u);  // round half to even on the dropped 13 bits
  return sign | static_cast<uint16_t>((bits - 0x38000000u) >> 13);  // rebias the exponent 127 -> 15
}

}  // namespace difftx::io
