// IEEE binary16 (F16) and bfloat16 (BF16) to float32. Both widen exactly: every value,
// including subnormals, infinities and NaN payloads (top bits), has a float32 twin.
#pragma once
#include <bit>
#include <cstdint>

namespace difftx {

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

}  // namespace difftx
