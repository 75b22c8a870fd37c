// Q4_K quantization: GGML's reference (quantize_row_q4_K_ref) restated. Each 32-weight
// sub-block gets a scale and a minimum from a weighted least-squares search over 21 candidate
// grids; the 8 scales and 8 minimums of a super-block are then quantized to 6 bits against the
// largest of each, and every weight is re-quantized against its sub-block's stored (rounded)
// scale and minimum.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "io/float16.h"
#include "kernels/quant/quantize_blocks.h"
#include "kernels/isa.h"

// Strict single precision, as in quantize.cpp.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace difftx::kernels::DIFFTX_ISA::quant {
namespace {

constexpr int kSub = 32;    // weights per sub-block
constexpr int kLevels = 15; // largest 4-bit level

struct ScaleFit {
  float scale;
  float minimum;  // the stored minimum is -offset >= 0: w ~ scale * q - minimum
};

// Quantizes x[0..32) to levels L in [0, 15] with x ~ scale * L + offset (offset <= 0), minimising
// sum w (scale * L + offset - x)^2 over a first grid spanning [min, max] and 21 stretched grids.
ScaleFit fit_sub_block(const float* x, const float* w, uint8_t* L) {
  float lo = x[0], hi = x[0], sum_w = w[0], sum_x = sum_w * x[0];
  for (int i = 1; i < kSub; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::memset(L, 0, kSub);
    return {0.0f, -lo};
  }
  float iscale = kLevels / (hi - lo), scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < kSub; ++i) {
    L[i] = static_cast<uint8_t>(std::clamp(nearest_int(iscale * (x[i] - lo)), 0, kLevels));
    const float diff = scale * L[i] + lo - x[i];
    best_error += w[i] * (diff * diff);
  }
  uint8_t trial[kSub];
  for (int step = 0; step <= 20; ++step) {
    iscale = (-1.0f + 0.1f * step + kLevels) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < kSub; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - lo)), 0, kLevels);
      trial[i] = static_cast<uint8_t>(l);
      sum_l += w[i] * l;
      sum_l2 += w[i] * l * l;
      sum_xl += w[i] * l * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_offset = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_offset > 0) this_offset = 0, this_scale = sum_xl / sum_l2;
    float error = 0;
    for (int i = 0; i < kSub; ++i) {
      const float diff = this_scale * trial[i] + this_offset - x[i];
      error += w[i] * (diff * diff);
    }
    if (error < best_error) {
      std::memcpy(L, trial, kSub);
      best_error = error, scale = this_scale, lo = this_offset;
    }
  }
  return {scale, -lo};
}

void quantize_super_block(const float* x, BlockQ4_K& y) {
  uint8_t L[kQ4_KWeights];
  float scales[kQ4_KSubBlocks], mins[kQ4_KSubBlocks], w[kSub];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kQ4_KSubBlocks; ++j) {
    const float* xs = x + kSub * j;
    float sum_x2 = 0;
    for (int i = 0; i < kSub; ++i) sum_x2 += xs[i] * xs[i];
    const float av_x = std::sqrt(sum_x2 / kSub);
    for (int i = 0; i < kSub; ++i) w[i] = av_x + std::fabs(xs[i]);  // weight: typical size + own size
    const ScaleFit fit = fit_sub_block(xs, w, L + kSub * j);
    scales[j] = fit.scale, mins[j] = fit.minimum;
    if (fit.scale > max_scale) max_scale = fit.scale;
    if (fit.minimum > max_min) max_min = fit.minimum;
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  std::memset(y.scales, 0, sizeof y.scales);
  for (int j = 0; j < kQ4_KSubBlocks; ++j) {
    // GGML stores nearest_int(...) into a uint8_t before the min with 63 (a negative fit wraps)
    const auto ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    const auto lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    q4_k_set_scale_min(y.scales, j, std::min<uint8_t>(63, ls), std::min<uint8_t>(63, lm));
  }
  y.d = io::float_to_f16(max_scale / 63.f);
  y.dmin = io::float_to_f16(max_min / 63.f);
  for (int j = 0; j < kQ4_KSubBlocks; ++j) {  // re-quantize against the stored scale and minimum
    const ScaleMin sm = q4_k_scale_min(y.scales, j);
    const float d = io::f16_to_float(y.d) * sm.scale;
    if (d == 0.0f) continue;
    const float dm = io::f16_to_float(y.dmin) * sm.min;
    for (int i = 0; i < kSub; ++i)
      L[kSub * j + i] = static_cast<uint8_t>(std::clamp(nearest_int((x[kSub * j + i] + dm) / d), 0, kLevels));
  }
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) y.qs[32 * g + l] = static_cast<uint8_t>(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
}

}  // namespace

void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t cols) {
  for (int64_t b = 0; b < cols / kQ4_KWeights; ++b) quantize_super_block(x + b * kQ4_KWeights, y[b]);
}

void dequantize_row_q4_k(const BlockQ4_K* x, float* y, int64_t cols) {
  for (int64_t b = 0; b < cols / kQ4_KWeights; ++b) {
    const float d = io::f16_to_float(x[b].d), dmin = io::f16_to_float(x[b].dmin);
    for (int g = 0; g < 4; ++g) {
      const ScaleMin lo = q4_k_scale_min(x[b].scales, 2 * g), hi = q4_k_scale_min(x[b].scales, 2 * g + 1);
      const float d_lo = d * lo.scale, m_lo = dmin * lo.min, d_hi = d * hi.scale, m_hi = dmin * hi.min;
      for (int l = 0; l < 32; ++l) {
        const uint8_t q = x[b].qs[32 * g + l];
        y[64 * g + l] = d_lo * (q & 0xF) - m_lo;
        y[64 * g + 32 + l] = d_hi * (q >> 4) - m_hi;
      }
    }
    y += kQ4_KWeights;
  }
}

}  // namespace difftx::kernels::DIFFTX_ISA::quant
