// Every registered weight type (kernels/quant/weight_type.h), checked from its registration alone:
// its facts against each other (names, GGML numbers, block sizes against what the quantizer
// writes), and at every CPU level this machine runs its quantizer's round trip within the type's
// own bound, the same bytes as the level in use, and its products in every order and path near
// the double reference. A new type is covered here by being in the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_level.h"
#include "core/rng.h"
#include "kernels/quant/weight_type.h"
#include "reference/matmul_reference.h"
#include "support/quant_weights.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

constexpr int64_t kBlocks = 24;  // blocks per test row (at least 2 Q4_K super-blocks of 256 columns)

int64_t test_cols(const WeightTypeInfo& t) { return kBlocks * std::max<int64_t>(t.block_weights, 32); }

// Values of either sign over four decades (1e-2 .. 1e2): no F16 subnormal or overflow, and
// blocks of very different ranges.
std::vector<float> spread_values(int64_t n, Rng& rng) {
  std::vector<float> x(n);
  for (float& v : x) v = static_cast<float>((rng.uniform() < 0.5 ? -1 : 1) * std::pow(10.0, rng.uniform(-2, 2)));
  return x;
}

TEST(WeightTraits, FactsAgreeWithEachOther) {
  std::set<uint32_t> ggml_types, file_types;
  ASSERT_EQ(weight_types().size(), static_cast<size_t>(kWeightTypeCount));
  for (size_t i = 0; i < weight_types().size(); ++i) {
    const WeightTypeInfo& t = weight_types()[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(static_cast<size_t>(t.type), i) << "the table is in the enum's order";
    EXPECT_EQ(&weight_type_info(t.type), &t);
    EXPECT_EQ(parse_weight_type(t.name), t.type);
    std::string upper = t.name;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    EXPECT_EQ(parse_weight_type(upper), t.type);
    EXPECT_EQ(weight_type_of_ggml(t.ggml_type), t.type);
    EXPECT_TRUE(ggml_types.insert(t.ggml_type).second) << "GGML type " << t.ggml_type << " registered twice";
    EXPECT_TRUE(file_types.insert(t.gguf_file_type).second) << "file type " << t.gguf_file_type << " registered twice";
    EXPECT_GE(t.block_weights, 1);
    EXPECT_GE(t.block_bytes, 1);
    EXPECT_EQ(t.is_block(), std::string(t.safetensors_dtype) == "U8") << "block types are stored as bytes";
    // 32-weight blocks at most 256 weights apart: the int8 kernels quantize x per 32-block
    if (t.is_block()) {
      EXPECT_EQ(t.block_weights % 32, 0);
    }
    EXPECT_EQ(weight_row_bytes(t.type, 3 * t.block_weights), 3 * t.block_bytes);
    EXPECT_GE(t.round_trip_error, 0);
    EXPECT_LT(t.round_trip_error, 0.25);
  }
  EXPECT_NE(testing::error_of([] { weight_type_of_ggml(6); }).find("GGML type 6"), std::string::npos);
}

// quantize writes exactly the row's bytes: every one of them (two fills give the same bytes) and
// none past them; dequantize(quantize(x)) is within the type's bound; every level writes the
// bytes of the level in use.
TEST(WeightTraits, QuantizersKeepTheirBoundsAndBytesAtEveryLevel) {
  for (const WeightTypeInfo& t : weight_types()) {
    const int64_t cols = test_cols(t), rows = 3, row_bytes = weight_row_bytes(t.type, cols);
    Rng rng(11);
    const std::vector<float> x = spread_values(rows * cols, rng);
    std::vector<uint8_t> want;
    for (CpuLevel level : cpu_levels_runnable()) {
      SCOPED_TRACE(std::string(t.name) + " at " + cpu_level_name(level));
      const backends::cpu::CpuKernels& k = backends::cpu::kernels(level);
      const int64_t slack = 64;
      std::vector<uint8_t> zeros(rows * row_bytes + slack, 0x00), ones(rows * row_bytes + slack, 0xFF);
      k.quantize_rows(t.type, x.data(), zeros.data(), rows, cols);
      k.quantize_rows(t.type, x.data(), ones.data(), rows, cols);
      ASSERT_TRUE(std::equal(zeros.begin(), zeros.end() - slack, ones.begin())) << "bytes left unwritten";
      ASSERT_TRUE(std::all_of(zeros.end() - slack, zeros.end(), [](uint8_t b) { return b == 0x00; }) &&
                  std::all_of(ones.end() - slack, ones.end(), [](uint8_t b) { return b == 0xFF; }))
          << "bytes written past the rows";
      zeros.resize(rows * row_bytes);
      if (want.empty()) {
        backends::cpu::kernels().quantize_rows(t.type, x.data(), (want = zeros).data(), rows, cols);
      }
      ASSERT_EQ(zeros, want) << "not the bytes of the level in use";
      std::vector<float> back(rows * cols);
      k.dequantize_rows(t.type, zeros.data(), back.data(), rows, cols);
      for (int64_t b0 = 0; b0 < rows * cols; b0 += t.block_weights) {
        float amax = 0;
        for (int64_t i = b0; i < b0 + t.block_weights; ++i) amax = std::max(amax, std::fabs(x[i]));
        for (int64_t i = b0; i < b0 + t.block_weights; ++i)
          ASSERT_LE(std::fabs(back[i] - x[i]), t.round_trip_error * amax * (1 + 1e-6)) << "weight " << i;
      }
    }
  }
}

// Every type's product at every level, in every order and path, near the double reference on
// the dequantized weights (the bound of x quantized to int8 covers the float paths too).
TEST(WeightTraits, ProductsFollowTheReferenceAtEveryLevel) {
  constexpr int64_t kRows = 37;
  for (const WeightTypeInfo& t : weight_types()) {
    Rng rng(12);
    const testing::Quantized q = testing::make_weights(t.type, kRows, test_cols(t), rng);
    for (int64_t N : {1, 5, 9}) {
      const std::vector<float> x = testing::random_vector(N * q.cols, rng);
      std::vector<float> want(N * kRows), got(N * kRows);
      reference::matmul(q.matrix(), x.data(), want.data(), N);
      for (CpuLevel level : cpu_levels_runnable()) {
        const backends::cpu::CpuKernels& k = backends::cpu::kernels(level);
        auto expect_near = [&](const std::string& what) {
          for (int64_t n = 0; n < N; ++n)
            for (int64_t r = 0; r < kRows; ++r) {
              const double bound = testing::matmul_tolerance(q, &x[n * q.cols], r, true);
              ASSERT_NEAR(got[n * kRows + r], want[n * kRows + r], bound)
                  << t.name << " at " << cpu_level_name(level) << ", " << what << ", N=" << N << " row " << r;
            }
        };
        for (MatmulOrder order : {MatmulOrder::by_size, MatmulOrder::gemv, MatmulOrder::gemm}) {
          k.matmul_by_order(q.matrix(), x.data(), got.data(), N, false, order);
          expect_near("order " + std::to_string(static_cast<int>(order)));
        }
        for (MatmulPath path : {MatmulPath::scalar, MatmulPath::simd, MatmulPath::simd_int8}) {
          k.matmul_by_path(q.matrix(), x.data(), got.data(), N, false, path);
          expect_near("path " + std::to_string(static_cast<int>(path)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace difftx::kernels
