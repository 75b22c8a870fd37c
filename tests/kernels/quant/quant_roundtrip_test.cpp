// quantize -> dequantize stays within the error each format allows (derived from its
// definition, docs/FORMATS.md), on random rows with a spread of magnitudes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "io/float16.h"
#include "kernels/quant/block_formats.h"
#include "kernels/quant/quantize.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

constexpr int64_t kRows = 16, kCols = 512;

// How far the stored F16 scale d may be from the one the quantizer computed: half an F16 step,
// 2^-11 relative for normal values and 2^-25 for subnormal ones.
double f16_scale_error(double d) { return std::max(0x1p-11 * d, 0x1p-25) * 1.001; }

// Rows of Gaussian-like values whose scale varies by row (1e-3 .. 1e2) and some outliers.
std::vector<float> spread_rows(Rng& rng) {
  std::vector<float> x(kRows * kCols);
  for (int64_t r = 0; r < kRows; ++r) {
    const double scale = std::pow(10.0, -3.0 + 5.0 * r / (kRows - 1));
    for (int64_t c = 0; c < kCols; ++c) {
      const double g = rng.uniform(-1, 1) + rng.uniform(-1, 1) + rng.uniform(-1, 1);
      x[r * kCols + c] = static_cast<float>(scale * (c % 97 == 0 ? 8 * g : g));
    }
  }
  return x;
}

struct RoundTrip {
  std::vector<float> x, back;
  std::vector<uint8_t> bytes;
};

RoundTrip round_trip(WeightType type, uint64_t seed) {
  Rng rng(seed);
  RoundTrip t{spread_rows(rng), std::vector<float>(kRows * kCols), {}};
  t.bytes.resize(weight_matrix_bytes(type, kRows, kCols));
  backends::cpu::kernels().quantize_rows(type, t.x.data(), t.bytes.data(), kRows, kCols);
  backends::cpu::kernels().dequantize_rows(type, t.bytes.data(), t.back.data(), kRows, kCols);
  return t;
}

TEST(QuantRoundTrip, FloatTypesRoundToHalfAnUlp) {
  for (WeightType type : {WeightType::f32, WeightType::bf16, WeightType::f16}) {
    const RoundTrip t = round_trip(type, 1);
    // significand bits: 24, 8, 11; relative error at most 2^-bits, and for F16 subnormals
    // (below 2^-14) half their spacing, 2^-25
    const double rel = type == WeightType::f32 ? 0 : type == WeightType::bf16 ? 0x1p-8 : 0x1p-11;
    const double abs = type == WeightType::f16 ? 0x1p-25 : 0;
    for (size_t i = 0; i < t.x.size(); ++i)
      ASSERT_LE(std::fabs(t.back[i] - t.x[i]), std::max(rel * std::fabs(t.x[i]), abs))
          << weight_type_name(type) << " i=" << i;
  }
}

TEST(QuantRoundTrip, Q8_0WithinHalfAStep) {
  const RoundTrip t = round_trip(WeightType::q8_0, 2);
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(t.bytes.data());
  for (size_t i = 0; i < t.x.size(); ++i) {
    const double d = io::f16_to_float(blocks[i / 32].d);
    // round to nearest: d/2, plus |q| <= 127 times the F16 scale's own rounding
    ASSERT_LE(std::fabs(t.back[i] - t.x[i]), (d / 2 + 128 * f16_scale_error(d)) * (1 + 1e-6)) << i;
  }
}

TEST(QuantRoundTrip, Q4_0WithinHalfAStepExceptAtTheClampedEnd) {
  const RoundTrip t = round_trip(WeightType::q4_0, 3);
  const auto* blocks = reinterpret_cast<const BlockQ4_0*>(t.bytes.data());
  for (size_t i = 0; i < t.x.size(); ++i) {
    const double d = std::fabs(io::f16_to_float(blocks[i / 32].d));
    if (d == 0) continue;
    // x/d lies in [-8, 8] with the levels -8..7: d/2 from the nearest level, except above 7.5
    // (the far end, only the extreme's mirror image), which clamps to 7; plus |q - 8| <= 8 times
    // the F16 scale's rounding.
    const double r = std::fabs(t.x[i]) / d;
    const double step = r > 7.5 ? r - 7 : 0.5;
    ASSERT_LE(std::fabs(t.back[i] - t.x[i]), (d * step + 9 * f16_scale_error(d)) * (1 + 1e-5)) << i;
  }
}

TEST(QuantRoundTrip, Q4_KPicksTheNearestLevelOfItsSubBlock) {
  const RoundTrip t = round_trip(WeightType::q4_k, 4);
  const auto* blocks = reinterpret_cast<const BlockQ4_K*>(t.bytes.data());
  for (size_t i = 0; i < t.x.size(); ++i) {
    const BlockQ4_K& b = blocks[i / 256];
    const ScaleMin sm = q4_k_scale_min(b.scales, static_cast<int>(i % 256 / 32));
    const double step = io::f16_to_float(b.d) * sm.scale, low = -io::f16_to_float(b.dmin) * sm.min;
    if (step == 0) continue;
    // levels low + step * q, q = 0..15: within step/2 inside [low, low + 15 step], else the
    // distance to the nearer end
    const double x = t.x[i], high = low + 15 * step;
    const double allowed = x < low ? low - x : x > high ? x - high : step / 2;
    ASSERT_LE(std::fabs(t.back[i] - x), allowed * (1 + 1e-5) + 1e-6 * step) << i;
  }
}

TEST(QuantRoundTrip, Q4_KIsMoreAccurateThanQ4_0AndQ8_0ThanBoth) {
  auto rms_error = [](WeightType type) {
    const RoundTrip t = round_trip(type, 5);
    double e = 0, s = 0;
    for (size_t i = 0; i < t.x.size(); ++i)
      e += std::pow(t.back[i] - t.x[i], 2), s += std::pow(t.x[i], 2);
    return std::sqrt(e / s);
  };
  const double q8 = rms_error(WeightType::q8_0), q40 = rms_error(WeightType::q4_0), q4k = rms_error(WeightType::q4_k);
  EXPECT_LT(q4k, q40);
  EXPECT_LT(q8, q4k);
}

}  // namespace
}  // namespace difftx::kernels
