// The int8 prefill GEMM of gemm_int8.h for ARM with the dotprod extension (sdot by element).
// x is quantized per 32-block as for the int8 decode; weights are repacked, 8 rows at a time,
// to signed bytes (Q4_0 as q - 8, Q8_0 as they are, Q4_K's nibbles) in the order
// [cols / 4][8 rows][4], so that one sdot multiplies 4 weights of each of 4 rows by the same 4
// bytes of one x row (a lane of an x vector): each int32 lane is one output, no horizontal
// sums. Per 32-block a lane ends scaled by d_w * d_x; Q4_K's minimums come off with the sums
// of the quantized x (QuantizedX::sum, int8_x.h). Each output has accumulators of its own, so
// its bits do not depend on N or on the other rows of x. With the int8 matrix multiply (the
// i8mm level, FEAT_I8MM) the panel holds pairs of rows 8 bytes at a time instead, [cols / 8][4
// row pairs][2][8], and one smmla multiplies 8 weights of 2 rows by 8 bytes of 2 x rows (a 2 x 2
// block of outputs); the block sums are the same integers, regrouped into the sdot lanes before
// the same F32 steps, so the bits are those of the dotprod level. Plain ARMv8.0 builds have no
// by-element int8 product: there no int8 GEMM is registered and matmul widens panels to F32 for
// sgemm.
#include "kernels/quant/gemm_int8.h"
#include "kernels/isa.h"
#include "kernels/quant/type_kernels.h"

#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/threading.h"
#include "io/float16.h"
#include "kernels/quant/block_formats.h"
#include "kernels/quant/int8_x.h"

namespace difftx::kernels::DIFFTX_ISA::quant {
namespace {

constexpr int kPanel = 8;  // weight rows per panel: two vectors of int32 lanes
constexpr int kTile = 4;   // x rows per micro-kernel call (2 x 4 accumulators and dot products in registers)

struct Panel {
  std::vector<int8_t> w;              // [cols / 4][kPanel][4] (sdot) or [cols / 8][kPanel / 2][2][8] (smmla)
  std::vector<float> scale, minimum;  // [blocks][kPanel]
};

// Weight k of panel row r into its place in the panel.
#ifdef __ARM_FEATURE_MATMUL_INT8
inline void put(Panel& p, int r, int64_t k, int8_t v) { p.w[(k / 8) * 8 * kPanel + r * 8 + k % 8] = v; }
#else
inline void put(Panel& p, int r, int64_t k, int8_t v) { p.w[(k / 4) * 4 * kPanel + r * 4 + k % 4] = v; }
#endif

void pack_row(const WeightMatrix& W, const uint8_t* row, int r, Panel& p) {
  const int64_t blocks = W.cols / 32;
  if (W.type == WeightType::q4_0) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(row);
    for (int64_t i = 0; i < blocks; ++i) {
      p.scale[i * kPanel + r] = io::f16_to_float(b[i].d);
      for (int j = 0; j < 16; ++j) {
        put(p, r, 32 * i + j, static_cast<int8_t>((b[i].qs[j] & 0xF) - 8));
        put(p, r, 32 * i + 16 + j, static_cast<int8_t>((b[i].qs[j] >> 4) - 8));
      }
    }
  } else if (W.type == WeightType::q8_0) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row);
    for (int64_t i = 0; i < blocks; ++i) {
      p.scale[i * kPanel + r] = io::f16_to_float(b[i].d);
      for (int j = 0; j < 32; ++j) put(p, r, 32 * i + j, b[i].qs[j]);
    }
  } else {  // q4_k
    const auto* b = reinterpret_cast<const BlockQ4_K*>(row);
    for (int64_t s = 0; s < W.cols / kQ4_KWeights; ++s) {
      const float d = io::f16_to_float(b[s].d), dmin = io::f16_to_float(b[s].dmin);
      for (int j = 0; j < kQ4_KSubBlocks; ++j) {
        const ScaleMin sm = q4_k_scale_min(b[s].scales, j);
        p.scale[(8 * s + j) * kPanel + r] = d * sm.scale;
        p.minimum[(8 * s + j) * kPanel + r] = dmin * sm.min;
        for (int l = 0; l < 32; ++l) {
          const uint8_t byte = b[s].qs[32 * (j / 2) + l];
          put(p, r, kQ4_KWeights * s + 32 * j + l, static_cast<int8_t>(j % 2 ? byte >> 4 : byte & 0xF));
        }
      }
    }
  }
}

void pack_panel(const WeightMatrix& W, int64_t row_bytes, int64_t r0, int rows, Panel& p) {
  std::fill(p.w.begin(), p.w.end(), 0);  // rows past the matrix's last stay zero
  std::fill(p.scale.begin(), p.scale.end(), 0.0f);
  std::fill(p.minimum.begin(), p.minimum.end(), 0.0f);
  for (int r = 0; r < rows; ++r) pack_row(W, static_cast<const uint8_t*>(W.data) + (r0 + r) * row_bytes, r, p);
}

#ifdef __ARM_FEATURE_MATMUL_INT8
// dot[half][c] lane i = sum over block b of W row 4 half + i times x row n0 + c: per 8 columns,
// one smmla per (row pair, x row pair), giving lanes (c, r), (c, r + 1), (c + 1, r), (c + 1, r +
// 1); an odd T's last pair takes a zero row. Then the lanes regrouped as sdot leaves them.
template <int T>
inline void block_dots(int32x4_t (&dot)[2][T], const Panel& p, const QuantizedX& qx, int64_t cols, int64_t n0,
                       int64_t b) {
  constexpr int kPairs = (T + 1) / 2;
  int32x4_t mm[kPanel / 2][kPairs];
  for (auto& pair : mm)
    for (auto& m : pair) m = vdupq_n_s32(0);
  const int8_t* w = p.w.data() + b * 32 * kPanel;
  for (int g = 0; g < 4; ++g) {  // columns 8g .. 8g + 7 of the block
    int8x16_t xv[kPairs];
    for (int j = 0; j < kPairs; ++j) {
      const int8_t* x0 = qx.q.data() + (n0 + 2 * j) * cols + 32 * b + 8 * g;
      xv[j] = vcombine_s8(vld1_s8(x0), 2 * j + 1 < T ? vld1_s8(x0 + cols) : vdup_n_s8(0));
    }
    for (int q = 0; q < kPanel / 2; ++q) {
      const int8x16_t wq = vld1q_s8(w + 8 * g * kPanel + 16 * q);
      for (int j = 0; j < kPairs; ++j) mm[q][j] = vmmlaq_s32(mm[q][j], xv[j], wq);
    }
  }
  for (int half = 0; half < 2; ++half)
    for (int j = 0; j < kPairs; ++j) {
      const int64x2_t lo = vreinterpretq_s64_s32(mm[2 * half][j]), hi = vreinterpretq_s64_s32(mm[2 * half + 1][j]);
      dot[half][2 * j] = vreinterpretq_s32_s64(vzip1q_s64(lo, hi));
      if (2 * j + 1 < T) dot[half][2 * j + 1] = vreinterpretq_s32_s64(vzip2q_s64(lo, hi));
    }
}
#else
// The 4-column groups k0 .. k0 + 3 of a block against 16 bytes of x per row: sdot by lane.
template <int T, int kLane>
inline void dot_group(int32x4_t (&dot)[2][T], const int8_t* w, const int8x16_t (&xv)[T]) {
  const int8x16_t w0 = vld1q_s8(w + 32 * kLane), w1 = vld1q_s8(w + 32 * kLane + 16);
  for (int c = 0; c < T; ++c) {
    dot[0][c] = vdotq_laneq_s32(dot[0][c], w0, xv[c], kLane);
    dot[1][c] = vdotq_laneq_s32(dot[1][c], w1, xv[c], kLane);
  }
}

// dot[half][c] lane i = sum over block b of W row 4 half + i times x row n0 + c.
template <int T>
inline void block_dots(int32x4_t (&dot)[2][T], const Panel& p, const QuantizedX& qx, int64_t cols, int64_t n0,
                       int64_t b) {
  for (auto& half : dot)
    for (auto& d : half) d = vdupq_n_s32(0);
  const int8_t* w = p.w.data() + b * 32 * kPanel;
  for (int h = 0; h < 2; ++h) {  // columns 16h .. 16h + 15 of the block
    int8x16_t xv[T];
    for (int c = 0; c < T; ++c) xv[c] = vld1q_s8(qx.q.data() + (n0 + c) * cols + 32 * b + 16 * h);
    const int8_t* wh = w + 16 * h * kPanel;
    dot_group<T, 0>(dot, wh, xv);
    dot_group<T, 1>(dot, wh, xv);
    dot_group<T, 2>(dot, wh, xv);
    dot_group<T, 3>(dot, wh, xv);
  }
}
#endif

// y[n0 + c][r0 + lane] for c < T and the panel's `rows` real rows.
template <int T>
void tile(const Panel& p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0, int rows, float* y,
          int64_t ld, bool accumulate) {
  float32x4_t acc[2][T];
  for (auto& half : acc)
    for (auto& a : half) a = vdupq_n_f32(0.0f);
  const bool minimums = !p.minimum.empty();
  for (int64_t b = 0; b < qx.blocks; ++b) {
    int32x4_t dot[2][T];
    block_dots<T>(dot, p, qx, cols, n0, b);
    for (int half = 0; half < 2; ++half) {
      const float32x4_t dw = vld1q_f32(p.scale.data() + b * kPanel + 4 * half);
      const float32x4_t mw = minimums ? vld1q_f32(p.minimum.data() + b * kPanel + 4 * half) : vdupq_n_f32(0.0f);
      for (int c = 0; c < T; ++c) {
        const int64_t i = (n0 + c) * qx.blocks + b;
        acc[half][c] = vfmaq_f32(acc[half][c], vcvtq_f32_s32(dot[half][c]), vmulq_n_f32(dw, qx.scale[i]));
        if (minimums) acc[half][c] = vfmsq_f32(acc[half][c], mw, vdupq_n_f32(qx.sum[i]));
      }
    }
  }
  for (int c = 0; c < T; ++c) {
    float lanes[kPanel];
    vst1q_f32(lanes, acc[0][c]);
    vst1q_f32(lanes + 4, acc[1][c]);
    float* out = y + (n0 + c) * ld + r0;
    for (int r = 0; r < rows; ++r) out[r] = accumulate ? out[r] + lanes[r] : lanes[r];
  }
}

template <int T>
void tail_tile(int t, const Panel& p, const QuantizedX& qx, int64_t cols, int64_t n0, int64_t r0, int rows, float* y,
               int64_t ld, bool accumulate) {
  if constexpr (T > 0) {
    if (t == T) return tile<T>(p, qx, cols, n0, r0, rows, y, ld, accumulate);
    tail_tile<T - 1>(t, p, qx, cols, n0, r0, rows, y, ld, accumulate);
  }
}

void gemm_dotprod(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate) {
  const QuantizedX qx = quantize_x(x, N, W.cols);
  const int64_t panels = (W.rows + kPanel - 1) / kPanel;
  const int64_t row_bytes = weight_row_bytes(W.type, W.cols);  // its checks, before the region
  const int64_t blocks = W.cols / 32;
  const int threads = thread_count();
  // one panel per thread, allocated before the region (nothing allocates inside it)
  std::vector<Panel> own(threads, Panel{std::vector<int8_t>(W.cols * kPanel), std::vector<float>(blocks * kPanel),
                                        std::vector<float>(W.type == WeightType::q4_k ? blocks * kPanel : 0)});
#pragma omp parallel num_threads(threads)
  {
    Panel& p = own[thread_index()];
#pragma omp for schedule(static)
    for (int64_t i = 0; i < panels; ++i) {
      const int64_t r0 = i * kPanel;
      const int rows = static_cast<int>(std::min<int64_t>(W.rows - r0, kPanel));
      pack_panel(W, row_bytes, r0, rows, p);
      int64_t n0 = 0;
      for (; n0 + kTile <= N; n0 += kTile) tile<kTile>(p, qx, W.cols, n0, r0, rows, y, W.rows, accumulate);
      if (n0 < N) tail_tile<kTile - 1>(static_cast<int>(N - n0), p, qx, W.cols, n0, r0, rows, y, W.rows, accumulate);
    }
  }
}

}  // namespace

// The three block types; none reads prebuilt panels (its own layout, repacked per call).
void register_gemm_int8(TypeKernelTable& table) {
  for (WeightType type : {WeightType::q4_0, WeightType::q8_0, WeightType::q4_k}) table[type].gemm_int8 = gemm_dotprod;
}

}  // namespace difftx::kernels::DIFFTX_ISA::quant
#endif
