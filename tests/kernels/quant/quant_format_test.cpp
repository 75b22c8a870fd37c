// The weight types' bytes against GGML's block definitions, worked out by hand from the format
// (docs/FORMATS.md) rather than from our code: scales as F16 bit patterns, nibble order,
// rounding rules (Q8_0 halves away from zero, Q4_0 halves up, ties to the first extreme),
// Q4_K's 6-bit scale packing; plus sizes and the errors for bad sizes and names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "kernels/quant/quantize.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

std::vector<uint8_t> quantize(WeightType type, const std::vector<float>& x) {
  std::vector<uint8_t> bytes(weight_row_bytes(type, static_cast<int64_t>(x.size())));
  backends::cpu::kernels().quantize_rows(type, x.data(), bytes.data(), 1, static_cast<int64_t>(x.size()));
  return bytes;
}

TEST(QuantFormat, SizesAreGgmls) {
  EXPECT_EQ(weight_row_bytes(WeightType::f32, 3), 12);
  EXPECT_EQ(weight_row_bytes(WeightType::bf16, 3), 6);
  EXPECT_EQ(weight_row_bytes(WeightType::f16, 3), 6);
  EXPECT_EQ(weight_row_bytes(WeightType::q8_0, 64), 68);    // 2 x (2 + 32)
  EXPECT_EQ(weight_row_bytes(WeightType::q4_0, 64), 36);    // 2 x (2 + 16)
  EXPECT_EQ(weight_row_bytes(WeightType::q4_k, 512), 288);  // 2 x (2 + 2 + 12 + 128)
  EXPECT_EQ(weight_type_info(WeightType::q4_k).ggml_type, 12u);
  EXPECT_EQ(parse_weight_type("Q4_K"), WeightType::q4_k);
  EXPECT_EQ(parse_weight_type("bf16"), WeightType::bf16);
}

TEST(QuantFormat, BadSizesAndNamesAreClearErrors) {
  EXPECT_NE(testing::error_of([] { weight_row_bytes(WeightType::q8_0, 33); }).find("32-weight blocks"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { weight_row_bytes(WeightType::q4_k, 32); }).find("256-weight blocks"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { weight_matrix_bytes(WeightType::f32, int64_t{1} << 62, 1024); }).find("overflow"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { weight_row_bytes(WeightType::f32, int64_t{1} << 62); }).find("overflow"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { parse_weight_type("q5_k"); }).find("expected one of"), std::string::npos);
  std::vector<float> x(48), y(48);
  EXPECT_THROW(backends::cpu::kernels().quantize_rows(WeightType::q4_0, x.data(), y.data(), 1, 48), Error);
  EXPECT_THROW(backends::cpu::kernels().dequantize_rows(WeightType::q8_0, y.data(), x.data(), -1, 32), Error);
}

TEST(QuantFormat, HalfPrecisionRoundsToNearestEven) {
  // bfloat16 keeps 8 significant bits: 1 + 2^-8 is halfway between 1 (0x3F80) and 1 + 2^-7
  // (0x3F81) and goes to the even one; 1 + 3 * 2^-8 goes up to 0x3F82.
  EXPECT_EQ(quantize(WeightType::bf16, {1.0f, 1.00390625f, 1.01171875f, -2.0f}),
            (std::vector<uint8_t>{0x80, 0x3F, 0x80, 0x3F, 0x82, 0x3F, 0x00, 0xC0}));
  // F16: 65504 is the largest finite value (0x7BFF), 65520 rounds to infinity, 2^-24 is the
  // smallest subnormal, 0.1 is 0x2E66.
  EXPECT_EQ(quantize(WeightType::f16, {65504.0f, 65520.0f, 0x1p-24f, 0.1f}),
            (std::vector<uint8_t>{0xFF, 0x7B, 0x00, 0x7C, 0x01, 0x00, 0x66, 0x2E}));
}

TEST(QuantFormat, Q8_0BlockByHand) {
  // max |x| = 127, so d = 1 (F16 0x3C00) and q = round(x): halves away from zero.
  std::vector<float> x(32, 0.0f);
  x[0] = 127, x[1] = -2.5f, x[2] = 2.5f, x[3] = 0.4f, x[4] = -0.6f, x[31] = -127;
  std::vector<uint8_t> want(34, 0);
  want[0] = 0x00, want[1] = 0x3C;
  want[2] = 127, want[3] = static_cast<uint8_t>(-3), want[4] = 3, want[5] = 0, want[6] = static_cast<uint8_t>(-1);
  want[33] = static_cast<uint8_t>(-127);
  EXPECT_EQ(quantize(WeightType::q8_0, x), want);
}

TEST(QuantFormat, Q4_0BlockByHand) {
  // The extreme -8 gives d = -8 / -8 = 1 and q = min(15, trunc(x + 8.5)); byte j holds weight
  // j in its low nibble and weight j + 16 in its high nibble.
  std::vector<float> x(32, 0.0f);
  x[0] = -8, x[1] = 7, x[2] = 0.5f, x[3] = -0.5f, x[4] = -1.5f, x[5] = 3, x[16] = 7.6f, x[17] = 1;
  std::vector<uint8_t> want(18, 0x88);  // zeros are q = 8 in both nibbles
  const uint8_t head[] = {0x00, 0x3C, 0xF0, 0x9F, 0x89, 0x88, 0x87, 0x8B};
  std::copy(std::begin(head), std::end(head), want.begin());
  EXPECT_EQ(quantize(WeightType::q4_0, x), want);
  // The first of two equal magnitudes sets the sign of d: 8 then -8 gives d = -1 (0xBC00);
  // 8 maps to q = 0 and -8 to 16, clamped to 15.
  std::vector<float> tie(32, 0.0f);
  tie[0] = 8, tie[1] = -8;
  const auto bytes = quantize(WeightType::q4_0, tie);
  EXPECT_EQ(bytes[0], 0x00);
  EXPECT_EQ(bytes[1], 0xBC);
  EXPECT_EQ(bytes[2], 0x80);  // weight 0: q 0, weight 16: q 8
  EXPECT_EQ(bytes[3], 0x8F);  // weight 1: q 15
}

// Weights k % 16 - offset: every sub-block spans 16 consecutive integers, so the first grid is
// exact (scale 1, minimum offset) and no later grid has a smaller error.
std::vector<uint8_t> q4_k_ramp_block(float offset) {
  std::vector<float> x(256);
  for (int k = 0; k < 256; ++k) x[k] = static_cast<float>(k % 16) - offset;
  return quantize(WeightType::q4_k, x);
}

TEST(QuantFormat, Q4_KBlockByHand) {
  // Scales 1 quantize to 63 against d = 1/63 -> F16 0x2410 (1.015625 * 2^-6). Minimums 0 give
  // dmin 0 and 6-bit minimums 0; minimums 4 give dmin = 4/63 -> 0x2C10 and minimums 63.
  // Scale bytes: s_j (j < 4) in bytes 0-3, m_j in bytes 4-7, for j >= 4 the low nibbles in
  // bytes 8-11 and the top two bits in bits 6-7 of bytes j - 4 (scale) and j (minimum).
  // Quants: byte 32g + l holds levels of weights 64g + l and 64g + 32 + l, here both l % 16.
  std::vector<uint8_t> no_min = {0x10, 0x24, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00,
                                 0x00, 0x00, 0x0F, 0x0F, 0x0F, 0x0F};
  std::vector<uint8_t> with_min(16, 0xFF);
  with_min[0] = 0x10, with_min[1] = 0x24, with_min[2] = 0x10, with_min[3] = 0x2C;
  for (int l = 0; l < 128; ++l) {
    no_min.push_back(static_cast<uint8_t>(0x11 * (l % 16)));
    with_min.push_back(static_cast<uint8_t>(0x11 * (l % 16)));
  }
  EXPECT_EQ(q4_k_ramp_block(0.0f), no_min);
  EXPECT_EQ(q4_k_ramp_block(4.0f), with_min);
}

TEST(QuantFormat, Q4_KDecodesHandBuiltScales) {
  // d = dmin = 1; sub-block 5 (high nibbles of bytes 64-95) gets scale 45 = 0b10'1101 and
  // minimum 26 = 0b01'1010: byte 9 = 0xAD (low nibbles), bits 6-7 of byte 1 = 0b10 and of byte
  // 5 = 0b01. Sub-block 1 (scale in byte 1's low bits = 3, minimum in byte 5's = 2) and the
  // rest (zeros) check that the neighbours are not disturbed.
  std::vector<uint8_t> block(144, 0);
  block[1] = 0x3C, block[3] = 0x3C;
  block[4 + 9] = 0xAD;
  block[4 + 1] = static_cast<uint8_t>(0x80 | 3);
  block[4 + 5] = static_cast<uint8_t>(0x40 | 2);
  for (int l = 0; l < 32; ++l) block[16 + l] = 0x70, block[16 + 64 + l] = static_cast<uint8_t>((l % 16) << 4);
  std::vector<float> w(256);
  backends::cpu::kernels().dequantize_rows(WeightType::q4_k, block.data(), w.data(), 1, 256);
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(w[l], 0.0f);                    // sub-block 0: scale 0, minimum 0
    EXPECT_EQ(w[32 + l], 3.0f * 7 - 2) << l;  // sub-block 1: high nibbles 7 of bytes 0-31
    EXPECT_EQ(w[160 + l], 45.0f * (l % 16) - 26) << l;
    EXPECT_EQ(w[128 + l], 0.0f);              // sub-block 4: scale and minimum 0
  }
}

}  // namespace
}  // namespace difftx::kernels
