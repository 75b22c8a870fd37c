// The avxvnni level's int8 kernels (vpdpbusd) give the avx2 level's bits (vpmaddubsw): both sum
// the same integers exactly (quant/simd_avx2.h's contract); so does the avx512f level, which
// compiles avx2's int8 kernels for x86-64-v4. Here at the operands' extremes too:
// |w| = 128 against x = +-127 (a vpmaddubsw pair of 32512) and every nibble 15 (a GEMM block's
// int16 run of 30480). Row dots (N < 8) and the GEMM (tails of its 6-row tile included).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "backends/cpu/cpu_level.h"
#include "kernels/quant/block_formats.h"
#include "kernels/quant/matmul.h"
#include "support/level_kernels.h"
#include "support/quant_weights.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

bool runs_both(CpuLevel level) {
  const std::vector<CpuLevel> runnable = cpu_levels_runnable();
  for (CpuLevel each : {CpuLevel::avx2, level})
    if (std::find(runnable.begin(), runnable.end(), each) == runnable.end()) return false;
  return true;
}

std::vector<float> product_at(CpuLevel level, const testing::Quantized& q, const std::vector<float>& x, int64_t N,
                              bool accumulate) {
  std::vector<float> y(N * q.rows, 0.5f);
  backends::cpu::kernels(level).matmul_by_path(q.matrix(), x.data(), y.data(), N, accumulate, MatmulPath::simd_int8);
  return y;
}

// Every quant byte of q (Q8_0's signed weights, Q4_0's and Q4_K's nibble pairs) set by `byte`.
void set_weight_bytes(testing::Quantized& q, const std::function<uint8_t(int64_t)>& byte) {
  const int64_t blocks = q.rows * q.cols / (q.type == WeightType::q4_k ? kQ4_KWeights : kQ8_0Weights);
  for (int64_t b = 0, i = 0; b < blocks; ++b) {
    if (q.type == WeightType::q8_0)
      for (int8_t& w : reinterpret_cast<BlockQ8_0*>(q.bytes.data())[b].qs) w = static_cast<int8_t>(byte(i++));
    else if (q.type == WeightType::q4_0)
      for (uint8_t& w : reinterpret_cast<BlockQ4_0*>(q.bytes.data())[b].qs) w = byte(i++);
    else
      for (uint8_t& w : reinterpret_cast<BlockQ4_K*>(q.bytes.data())[b].qs) w = byte(i++);
  }
}

void expect_bits_of_avx2(CpuLevel level) {
  Rng rng(27);
  for (WeightType type : {WeightType::q8_0, WeightType::q4_0, WeightType::q4_k}) {
    const int64_t rows = 37, cols = type == WeightType::q4_k ? 512 : 288;  // Q4_0: an odd last block
    testing::Quantized random = testing::make_weights(type, rows, cols, rng);
    testing::Quantized largest = random, mixed = random;  // Q8_0: -128 (|w| = 128); nibbles: 15
    set_weight_bytes(largest, [&](int64_t) { return type == WeightType::q8_0 ? 0x80 : 0xFF; });
    set_weight_bytes(mixed, [&](int64_t i) { return type == WeightType::q8_0 ? (i % 3 ? 0x80 : 0x7F) : (i % 2 ? 0xF0 : 0x0F); });
    for (const testing::Quantized* q : {&random, &largest, &mixed})
      for (int64_t N : {1, 3, 4, 5, 8, 13}) {
        // x: random, then every block quantized to +-127 (all one sign, then alternating)
        std::vector<std::vector<float>> xs = {testing::random_vector(N * cols, rng), std::vector<float>(N * cols, -1.0f),
                                              std::vector<float>(N * cols)};
        for (int64_t i = 0; i < N * cols; ++i) xs[2][i] = i % 4 < 2 ? 1.0f : -1.0f;
        for (const auto& x : xs)
          for (bool accumulate : {false, true})
            ASSERT_EQ(product_at(CpuLevel::avx2, *q, x, N, accumulate), product_at(level, *q, x, N, accumulate))
                << cpu_level_name(level) << " " << weight_type_name(type) << " N=" << N << " accumulate=" << accumulate;
      }
  }
}

TEST(Int8Levels, AvxVnniGivesTheBitsOfAvx2) {
  if (!runs_both(CpuLevel::avxvnni)) GTEST_SKIP() << "this build or CPU lacks the avx2 or the avxvnni level";
  expect_bits_of_avx2(CpuLevel::avxvnni);
}

TEST(Int8Levels, Avx512fGivesTheBitsOfAvx2) {
  if (!runs_both(CpuLevel::avx512f)) GTEST_SKIP() << "this build or CPU lacks the avx2 or the avx512f level";
  expect_bits_of_avx2(CpuLevel::avx512f);
}

}  // namespace
}  // namespace difftx::kernels
