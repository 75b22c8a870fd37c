// x quantized to int8 per 32-block by Q8_0's rule (d = max|x| / 127, q = round(x / d)): the one
// quantizer of the int8 row dots (prepare_x.cpp) and the int8 GEMMs (gemm_int8*.cpp), defined
// in prepare_x.cpp.
//
// Q4_K's minimums: a sub-block's weights are w = d_w s q_w - dmin m, so its dot product with x
// is d_w s (q_w . x) - dmin m (sum of x). With x' = d q in place of x, both terms must take
// x': the product is then sum w x' exactly (before F32 rounding), whose error is
// sum w (x' - x), while an exact sum of x in the second term leaves sum d_w s q_w (x' - x),
// larger by the minimum m in every weight (docs/BENCHMARKS.md "Q4_K's minimums on the
// quantized x"; llama.cpp's Q8_K bsums are sums of the quants for the same reason). So the int8
// kernels take the sums of x' (QuantizedBlock::sum).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

// A block of x quantized, x' = d q.
struct QuantizedBlock {
  float d;
  int32_t q_sum;  // the sum of its q
  // The sum of x' over the block (above).
  float sum() const { return d * static_cast<float>(q_sum); }
};

// One block of 32 values into q.
QuantizedBlock quantize_x_block(const float* x, int8_t* q);

// N rows of cols values (a multiple of 32), every block quantized, with the sums the GEMMs need.
struct QuantizedX {
  int64_t blocks;                 // per row
  std::vector<int8_t> q;          // [N][cols]
  std::vector<float> scale;       // [N][blocks]: d_x
  std::vector<int32_t> byte_sum;  // [N][blocks]: sum of the block's q
  std::vector<float> sum;         // [N][blocks]: the sum of x' (QuantizedBlock::sum: Q4_K's minimums)
};
QuantizedX quantize_x(const float* x, int64_t N, int64_t cols);

}  // namespace difftx::kernels::DIFFTX_ISA::quant
