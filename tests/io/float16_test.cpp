#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "io/float16.h"

namespace difftx::io {
namespace {

// Reference twin: the value of a binary floating-point pattern with `exponent_bits` and
// `mantissa_bits`, computed from its definition in double.
double decode_reference(uint32_t bits, int exponent_bits, int mantissa_bits) {
  const bool negative = (bits >> (exponent_bits + mantissa_bits)) & 1;
  const uint32_t exponent = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  const int bias = (1 << (exponent_bits - 1)) - 1;
  double magnitude;
  if (exponent == (1u << exponent_bits) - 1)
    magnitude = mantissa == 0 ? INFINITY : NAN;
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  else
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -mantissa_bits),
                           static_cast<int>(exponent) - bias);
  return negative ? -magnitude : magnitude;
}

// Checks got against the reference, bit for bit: same sign (so -0 stays -0), same value, and
// for NaN the payload moved to the top of the float32 mantissa.
void expect_widened(float got, uint32_t bits, int exponent_bits, int mantissa_bits) {
  const double want = decode_reference(bits, exponent_bits, mantissa_bits);
  ASSERT_EQ(std::signbit(got), std::signbit(want)) << "bits " << bits;
  if (std::isnan(want)) {
    ASSERT_TRUE(std::isnan(got)) << "bits " << bits;
    const uint32_t payload = bits & ((1u << mantissa_bits) - 1);
    ASSERT_EQ(std::bit_cast<uint32_t>(got) & 0x7fffffu, payload << (23 - mantissa_bits)) << "bits " << bits;
  } else {
    ASSERT_EQ(static_cast<double>(got), want) << "bits " << bits;
  }
}

TEST(Float16, F16ToFloatMatchesTheDefinitionForAllBitPatterns) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits)
    expect_widened(f16_to_float(static_cast<uint16_t>(bits)), bits, 5, 10);
}

TEST(Float16, BF16ToFloatMatchesTheDefinitionForAllBitPatterns) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits)
    expect_widened(bf16_to_float(static_cast<uint16_t>(bits)), bits, 8, 7);
}

#ifdef __FLT16_MANT_DIG__
// A second, independent oracle: the compiler's own _Float16 conversion.
TEST(Float16, F16ToFloatAgreesWithTheCompilersFloat16) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float want = static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(bits)));
    const float got = f16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(got)) << "bits " << bits;
    else
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << "bits " << bits;
  }
}
#endif

}  // namespace
}  // namespace difftx::io
