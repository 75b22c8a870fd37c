// The x side of the decode row dots (row_dots.h): block sums, and for the int8 kernels x
// quantized per 32-block and laid out in block pairs; and the int8 GEMMs' quantized x (int8_x.h).
// The block sums are of the x the kernel multiplies: exact where x stays F32, of x' = d q where
// it is int8 (int8_x.h: Q4_K's minimums).
#include <algorithm>
#include <cmath>

#include "kernels/op_threading.h"
#include "kernels/quant/int8_x.h"
#include "kernels/quant/row_dots.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

QuantizedBlock quantize_x_block(const float* x, int8_t* q) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127, id = d != 0.0f ? 1.0f / d : 0.0f;
  int32_t q_sum = 0;
  for (int j = 0; j < 32; ++j) {
    q[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
    q_sum += q[j];
  }
  return {d, q_sum};
}

QuantizedX quantize_x(const float* x, int64_t N, int64_t cols) {
  QuantizedX qx{cols / 32, std::vector<int8_t>(N * cols), {}, {}, {}};
  qx.scale.resize(N * qx.blocks), qx.byte_sum.resize(N * qx.blocks), qx.sum.resize(N * qx.blocks);
#pragma omp parallel for schedule(static) if (worth_parallel(N * cols))  // not a decode row's few blocks
  for (int64_t i = 0; i < N * qx.blocks; ++i) {
    const QuantizedBlock block = quantize_x_block(x + i * 32, qx.q.data() + i * 32);
    qx.scale[i] = block.d, qx.byte_sum[i] = block.q_sum, qx.sum[i] = block.sum();
  }
  return qx;
}

namespace {

// Pair p holds blocks A = 2p and B = 2p + 1 (B zero past the end). Interleaved (Q4_0): A[0:16],
// B[0:16], A[16:32], B[16:32], so that int32 lanes 0-3 and 8-11 are A's; else A then B, lanes
// 0-7 A's. Each lane gets its block's scale and -8 times the sum of its four bytes; each block's
// sum of x' goes to px.sums.
void fill_int8_pairs(const float* x, int64_t cols, bool interleaved, PreparedX& px) {
  const int64_t blocks = cols / 32, pairs = (blocks + 1) / 2;
  px.q.assign(pairs * 64, 0);
  px.lane_scales.assign(pairs * 16, 0.0f);
  px.lane_offsets.assign(pairs * 16, 0);
  int8_t q[32];
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t p = b / 2;
    const int side = static_cast<int>(b % 2);
    const QuantizedBlock block = quantize_x_block(x + 32 * b, q);
    px.sums[b] = block.sum();
    int8_t* pair = px.q.data() + 64 * p;
    if (interleaved) {
      std::copy(q, q + 16, pair + 16 * side);
      std::copy(q + 16, q + 32, pair + 32 + 16 * side);
    } else {
      std::copy(q, q + 32, pair + 32 * side);
    }
    for (int k = 0; k < 8; ++k) {
      const int lane = interleaved ? 8 * (k / 4) + 4 * side + k % 4 : 8 * side + k;
      px.lane_scales[16 * p + lane] = block.d;
      const int8_t* v = pair + 4 * lane;
      px.lane_offsets[16 * p + lane] = -8 * (v[0] + v[1] + v[2] + v[3]);
    }
  }
}

}  // namespace

void prepare_x(WeightType type, bool int8_pairs, const float* x, int64_t cols, PreparedX& px) {
  px.x = x;
  px.sums.assign(cols / 32, 0.0f);
  if (int8_pairs)
    fill_int8_pairs(x, cols, type == WeightType::q4_0, px);
  else if (type == WeightType::q4_k)
    for (size_t b = 0; b < px.sums.size(); ++b)
      for (int j = 0; j < 32; ++j) px.sums[b] += x[32 * b + j];
}

}  // namespace difftx::kernels::DIFFTX_ISA::quant
