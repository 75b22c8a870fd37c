#include "kernels/quant/quantize.h"

#include <cmath>
#include <cstring>

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "core/error.h"
#include "io/float16.h"
#include "kernels/quant/quantize_blocks.h"
#include "kernels/quant/type_kernels.h"
#include "kernels/isa.h"

// The reference quantizers are defined by single-precision operations each rounded on its own:
// a fused multiply-add would change some bytes (GGML compiles them as ISO C, without fusing).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace difftx::kernels::DIFFTX_ISA {
namespace quant {

int nearest_int(float value) { return static_cast<int>(std::nearbyint(value)); }

// Q8_0: d = max|x| / 127, q = round(x / d) with halves away from zero (roundf).
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t cols) {
  for (int64_t b = 0; b < cols / kQ8_0Weights; ++b, x += kQ8_0Weights) {
    float amax = 0.0f;
    for (int j = 0; j < kQ8_0Weights; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = io::float_to_f16(d);
    for (int j = 0; j < kQ8_0Weights; ++j) y[b].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

// Q4_0: the weight of largest magnitude (the first, on ties) maps to -8: d = that weight / -8,
// q = min(15, trunc(x / d + 8.5)), i.e. rounding halves up.
void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t cols) {
  constexpr int half = kQ4_0Weights / 2;
  for (int64_t b = 0; b < cols / kQ4_0Weights; ++b, x += kQ4_0Weights) {
    float amax = 0.0f, extreme = 0.0f;
    for (int j = 0; j < kQ4_0Weights; ++j)
      if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), extreme = x[j];
    const float d = extreme / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = io::float_to_f16(d);
    for (int j = 0; j < half; ++j) {
      const float lo = x[j] * id, hi = x[half + j] * id;
      const int q_lo = std::min(15, static_cast<int>(static_cast<int8_t>(lo + 8.5f)));
      const int q_hi = std::min(15, static_cast<int>(static_cast<int8_t>(hi + 8.5f)));
      y[b].qs[j] = static_cast<uint8_t>(q_lo | (q_hi << 4));
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t cols) {
  for (int64_t b = 0; b < cols / kQ8_0Weights; ++b) {
    const float d = io::f16_to_float(x[b].d);
    for (int j = 0; j < kQ8_0Weights; ++j) y[b * kQ8_0Weights + j] = x[b].qs[j] * d;
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t cols) {
  constexpr int half = kQ4_0Weights / 2;
  for (int64_t b = 0; b < cols / kQ4_0Weights; ++b, y += kQ4_0Weights) {
    const float d = io::f16_to_float(x[b].d);
    for (int j = 0; j < half; ++j) {
      y[j] = static_cast<float>((x[b].qs[j] & 0xF) - 8) * d;
      y[half + j] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

// The float types: F32 as it is, BF16 and F16 rounded to nearest even.
void quantize_row_f32(const float* x, void* y, int64_t cols) { std::memcpy(y, x, cols * sizeof(float)); }
void quantize_row_bf16(const float* x, void* y, int64_t cols) {
  for (int64_t i = 0; i < cols; ++i) static_cast<uint16_t*>(y)[i] = io::float_to_bf16(x[i]);
}
void quantize_row_f16(const float* x, void* y, int64_t cols) {
  for (int64_t i = 0; i < cols; ++i) static_cast<uint16_t*>(y)[i] = io::float_to_f16(x[i]);
}

void dequantize_row_f32(const void* x, float* y, int64_t cols) { std::memcpy(y, x, cols * sizeof(float)); }
void dequantize_row_bf16(const void* x, float* y, int64_t cols) {
  for (int64_t i = 0; i < cols; ++i) y[i] = io::bf16_to_float(static_cast<const uint16_t*>(x)[i]);
}
void dequantize_row_f16(const void* x, float* y, int64_t cols) {
  const auto* h = static_cast<const uint16_t*>(x);
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= cols; i += 16) _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(h + i))));
#elif defined(__F16C__)
  for (; i + 8 <= cols; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(h + i))));
#endif
  for (; i < cols; ++i) y[i] = io::f16_to_float(h[i]);
}

// A block type's row functions over untyped rows.
template <class Block, void (*kRow)(const float*, Block*, int64_t)>
void quantize_blocks(const float* x, void* y, int64_t cols) {
  kRow(x, static_cast<Block*>(y), cols);
}
template <class Block, void (*kRow)(const Block*, float*, int64_t)>
void dequantize_blocks(const void* x, float* y, int64_t cols) {
  kRow(static_cast<const Block*>(x), y, cols);
}

void register_quantizers(TypeKernelTable& table) {
  table[WeightType::f32].quantize_row = quantize_row_f32;
  table[WeightType::f32].dequantize_row = dequantize_row_f32;
  table[WeightType::bf16].quantize_row = quantize_row_bf16;
  table[WeightType::bf16].dequantize_row = dequantize_row_bf16;
  table[WeightType::f16].quantize_row = quantize_row_f16;
  table[WeightType::f16].dequantize_row = dequantize_row_f16;
  table[WeightType::q8_0].quantize_row = quantize_blocks<BlockQ8_0, quantize_row_q8_0>;
  table[WeightType::q8_0].dequantize_row = dequantize_blocks<BlockQ8_0, dequantize_row_q8_0>;
  table[WeightType::q4_0].quantize_row = quantize_blocks<BlockQ4_0, quantize_row_q4_0>;
  table[WeightType::q4_0].dequantize_row = dequantize_blocks<BlockQ4_0, dequantize_row_q4_0>;
  table[WeightType::q4_k].quantize_row = quantize_blocks<BlockQ4_K, quantize_row_q4_k>;
  table[WeightType::q4_k].dequantize_row = dequantize_blocks<BlockQ4_K, dequantize_row_q4_k>;
}

}  // namespace quant

void quantize_rows(WeightType type, const float* src, void* dst, int64_t rows, int64_t cols) {
  const int64_t row_bytes = weight_row_bytes(type, cols);
  weight_matrix_bytes(type, rows, cols);  // overflow check
  DIFFTX_CHECK(rows == 0 || cols == 0 || (src && dst), "quantize_rows: null source or destination");
  const quant::QuantizeRow quantize_row = quant::type_kernels(type).quantize_row;
  for (int64_t r = 0; r < rows; ++r) quantize_row(src + r * cols, static_cast<uint8_t*>(dst) + r * row_bytes, cols);
}

void dequantize_rows(WeightType type, const void* src, float* dst, int64_t rows, int64_t cols) {
  const int64_t row_bytes = weight_row_bytes(type, cols);
  weight_matrix_bytes(type, rows, cols);
  DIFFTX_CHECK(rows == 0 || cols == 0 || (src && dst), "dequantize_rows: null source or destination");
  const quant::DequantizeRow dequantize_row = quant::type_kernels(type).dequantize_row;
  for (int64_t r = 0; r < rows; ++r)
    dequantize_row(static_cast<const uint8_t*>(src) + r * row_bytes, dst + r * cols, cols);
}

}  // namespace difftx::kernels::DIFFTX_ISA
