// x quantized to int8 per 32-block by Q8_0's rule (d = max|x| / 127, q = round(x / d)): the one
// quantizer of the int8 row dots (prepare_x.cpp) and the int8 GEMMs (gemm_int8*.cpp), defined
// in prepare_x.cpp.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::quant {

// One block of 32 values into q; returns d.
float quantize_x_block(const float* x, int8_t* q);

// N rows of cols values (a multiple of 32), every block quantized, with the sums the GEMMs need.
struct QuantizedX {
  int64_t blocks;                 // per row
  std::vector<int8_t> q;          // [N][cols]
  std::vector<float> scale;       // [N][blocks]: d_x
  std::vector<int32_t> byte_sum;  // [N][blocks]: sum of the block's q
  std::vector<float> sum;         // [N][blocks]: exact sum of x over the block (Q4_K minimums)
};
QuantizedX quantize_x(const float* x, int64_t N, int64_t cols);

}  // namespace difftx::kernels::DIFFTX_ISA::quant
