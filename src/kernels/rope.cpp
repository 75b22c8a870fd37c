// Rotary position embedding (docs/SPEC.md §1): each pair (a, b) of a head is rotated by the angle
// pos * theta^(-2i/d) of its pair index i; the backward pass rotates by the negative angle.
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "kernels/op_threading.h"
#include "kernels/ops.h"
#include "kernels/isa.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace difftx::kernels::DIFFTX_ISA {
namespace {

// Rotates the pairs (x[2i], x[2i+1]) for i in [0, half) by the angles whose cosines and
// (signed) sines are c[i], s[i].
inline void rotate_interleaved(float* x, const float* c, const float* s, float sign, int64_t half) {
  int64_t i = 0;
#ifdef __AVX512F__
  // 8 pairs per step: duplicate c and s to both lanes of a pair, then
  //   even lane: a c - b s,  odd lane: b c + a s  =  fmaddsub(x, C, swap(x) * S).
  // (The maskz forms avoid GCC 12's false "may be used uninitialized" warnings.)
  const __m512i dup = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  const __m512 sgn = _mm512_set1_ps(sign);
  for (; i + 8 <= half; i += 8) {
    const __m512 cc = _mm512_maskz_permutexvar_ps(0xFFFF, dup, _mm512_maskz_loadu_ps(0xFF, c + i));
    const __m512 ss = _mm512_mul_ps(
        sgn, _mm512_maskz_permutexvar_ps(0xFFFF, dup, _mm512_maskz_loadu_ps(0xFF, s + i)));
    const __m512 v = _mm512_loadu_ps(x + 2 * i);
    const __m512 swapped = _mm512_maskz_shuffle_ps(0xFFFF, v, v, 0xB1);  // (b, a) in each pair
    _mm512_storeu_ps(x + 2 * i, _mm512_fmaddsub_ps(v, cc, _mm512_mul_ps(swapped, ss)));
  }
#elif defined(__AVX2__) && defined(__FMA__)
  // 4 pairs per step, as above.
  const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 sgn = _mm256_set1_ps(sign);
  for (; i + 4 <= half; i += 4) {
    const __m256 cc = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(c + i)), dup);
    const __m256 ss = _mm256_mul_ps(sgn, _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(s + i)), dup));
    const __m256 v = _mm256_loadu_ps(x + 2 * i);
    const __m256 swapped = _mm256_permute_ps(v, 0xB1);  // (b, a) in each pair
    _mm256_storeu_ps(x + 2 * i, _mm256_fmaddsub_ps(v, cc, _mm256_mul_ps(swapped, ss)));
  }
#endif
  for (; i < half; ++i) {
    const float a = x[2 * i], b = x[2 * i + 1], si = sign * s[i];
    x[2 * i] = a * c[i] - b * si;
    x[2 * i + 1] = b * c[i] + a * si;
  }
}

// Rotates the pairs (x[i], x[i + half]) for i in [0, half).
inline void rotate_half(float* x, const float* c, const float* s, float sign, int64_t half) {
  float* lo = x;
  float* hi = x + half;
#pragma omp simd
  for (int64_t i = 0; i < half; ++i) {
    const float a = lo[i], b = hi[i], si = sign * s[i];
    lo[i] = a * c[i] - b * si;
    hi[i] = b * c[i] + a * si;
  }
}

void rope_apply(const char* op, const RopeTable& table, RopeStyle style, float* x, int64_t B,
                int64_t T, int64_t heads, int64_t pos0, float sign) {
  DIFFTX_CHECK(table.cos != nullptr && table.sin != nullptr && table.d > 0, op,
               ": the RoPE table is empty (build it with rope_table_build)");
  DIFFTX_CHECK(B >= 0 && T >= 0 && heads > 0, op, ": expected B >= 0, T >= 0, heads > 0, got B=", B,
               " T=", T, " heads=", heads);
  DIFFTX_CHECK(pos0 >= 0 && pos0 + T <= table.max_T, op, ": positions [", pos0, ", ", pos0 + T,
               ") exceed the RoPE table's max_T = ", table.max_T);
  const int64_t d = table.d, half = d / 2, width = heads * d;
#pragma omp parallel for schedule(static) if (worth_parallel(B * T * width))
  for (int64_t row = 0; row < B * T; ++row) {
    const int64_t pos = pos0 + row % T;
    const float* c = table.cos + pos * half;
    const float* s = table.sin + pos * half;
    for (int64_t h = 0; h < heads; ++h) {
      float* head = x + row * width + h * d;
      if (style == RopeStyle::interleaved)
        rotate_interleaved(head, c, s, sign, half);
      else
        rotate_half(head, c, s, sign, half);
    }
  }
}

}  // namespace

double rope_inverse_frequency(int64_t i, int64_t d, double theta, const RopeScaling& scaling) {
  const double inv_freq = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
  switch (scaling.type) {
    case RopeScalingType::none: return inv_freq;
    case RopeScalingType::linear: return inv_freq / scaling.factor;
    case RopeScalingType::llama3: {
      const double wavelength = 2.0 * std::numbers::pi / inv_freq;
      const double long_wavelength = scaling.original_max_position / scaling.low_freq_factor;
      const double short_wavelength = scaling.original_max_position / scaling.high_freq_factor;
      if (wavelength < short_wavelength) return inv_freq;
      if (wavelength > long_wavelength) return inv_freq / scaling.factor;
      const double smooth = (scaling.original_max_position / wavelength - scaling.low_freq_factor) /
                            (scaling.high_freq_factor - scaling.low_freq_factor);
      return (1.0 - smooth) * inv_freq / scaling.factor + smooth * inv_freq;
    }
  }
  return inv_freq;
}

RopeTable rope_table_build(float* storage, int64_t max_T, int64_t d, double theta, const RopeScaling& scaling) {
  DIFFTX_CHECK(max_T > 0, "rope_table_build: max_T must be > 0, got ", max_T);
  DIFFTX_CHECK(d > 0 && d % 2 == 0, "rope_table_build: head width d must be even and > 0, got ", d);
  DIFFTX_CHECK(theta > 0, "rope_table_build: theta must be > 0, got ", theta);
  DIFFTX_CHECK(scaling.factor > 0 && std::isfinite(scaling.factor), "rope_table_build: scaling factor must be > 0, got ",
               scaling.factor);
  const int64_t half = d / 2;
  RopeTable table{max_T, d, storage, storage + max_T * half};
  for (int64_t i = 0; i < half; ++i) {
    const double inv_freq = DIFFTX_ISA::rope_inverse_frequency(i, d, theta, scaling);
    for (int64_t t = 0; t < max_T; ++t) {
      table.cos[t * half + i] = static_cast<float>(std::cos(t * inv_freq));
      table.sin[t * half + i] = static_cast<float>(std::sin(t * inv_freq));
    }
  }
  return table;
}

void rope_forward(const RopeTable& table, RopeStyle style, float* x, int64_t B, int64_t T,
                  int64_t heads, int64_t pos0) {
  rope_apply("rope_forward", table, style, x, B, T, heads, pos0, 1.0f);
}

void rope_backward(const RopeTable& table, RopeStyle style, float* dx, int64_t B, int64_t T,
                   int64_t heads, int64_t pos0) {
  rope_apply("rope_backward", table, style, dx, B, T, heads, pos0, -1.0f);
}

}  // namespace difftx::kernels::DIFFTX_ISA
