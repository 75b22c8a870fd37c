// Weight panels (weight_panels.h): every weight and scale of a packed matrix sits where the
// layout says (read back here from the layout's definition, not through the packer's code), rows
// past the end are zero, and the GEMMs (int8 for the block types, float for BF16 and F16) give
// the same bits from prebuilt panels as from repacking per call; with panels, the gemv order is
// that GEMM's, batch-invariant at any N and thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/error.h"
#include "io/float16.h"
#include "kernels/quant/matmul.h"
#include "kernels/quant/weight_panels.h"
#include "support/level_kernels.h"
#include "support/quant_weights.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

using testing::Quantized;

const WeightType kPanelTypes[] = {WeightType::q8_0, WeightType::q4_0, WeightType::q4_k, WeightType::bf16,
                                  WeightType::f16};

std::vector<uint8_t> packed(const Quantized& q) {
  std::vector<uint8_t> out(quant::weight_panels_bytes(q.type, q.rows, q.cols));
  quant::pack_panels(q.matrix(), 0, quant::panel_count(q.rows), out.data());
  return out;
}

// Weight k of row r (0 past the matrix's end) read back from the panels by the header's layout.
double weight_at(const std::vector<uint8_t>& panels, WeightType type, int64_t cols, int64_t r, int64_t k) {
  if (type == WeightType::bf16 || type == WeightType::f16) {
    uint16_t v;
    std::memcpy(&v, panels.data() + (r / 16) * cols * 32 + 2 * (16 * k + r % 16), 2);
    return type == WeightType::bf16 ? io::bf16_to_float(v) : io::f16_to_float(v);
  }
  const int64_t record_bytes = type == WeightType::q8_0 ? 512 + 32 : type == WeightType::q4_0 ? 256 + 32 : 256 + 128;
  const int64_t blocks = cols / 32, b = k / 32, j = k % 32, lane = r % 16;
  const uint8_t* record = panels.data() + ((r / 16) * blocks + b) * record_bytes;
  if (type == WeightType::q8_0) {
    const auto q = static_cast<int8_t>(record[64 * (j / 4) + 4 * lane + j % 4]);
    uint16_t d;
    std::memcpy(&d, record + 512 + 2 * lane, 2);
    return static_cast<double>(io::f16_to_float(d)) * q;
  }
  const int i = j % 16;
  const uint8_t byte = record[64 * (i / 4) + 4 * lane + i % 4];
  const int q = j < 16 ? byte & 0xF : byte >> 4;
  if (type == WeightType::q4_0) {
    uint16_t d;
    std::memcpy(&d, record + 256 + 2 * lane, 2);
    return static_cast<double>(io::f16_to_float(d)) * (q - 8);
  }
  float scale, minimum;
  std::memcpy(&scale, record + 256 + 4 * lane, 4);
  std::memcpy(&minimum, record + 256 + 64 + 4 * lane, 4);
  return static_cast<double>(scale) * q - minimum;
}

TEST(WeightPanels, EveryWeightIsWhereTheLayoutSays) {
  Rng rng(31);
  for (WeightType type : kPanelTypes)
    for (int64_t rows : {1, 16, 37}) {
      const int64_t cols = type == WeightType::q4_k ? 512 : type == WeightType::f16 ? 17 : 96;
      const Quantized q = testing::make_weights(type, rows, cols, rng);
      const auto panels = packed(q);
      for (int64_t r = 0; r < quant::panel_count(rows) * 16; ++r)
        for (int64_t k = 0; k < cols; ++k) {
          const double got = weight_at(panels, type, cols, r, k);
          const double want = r < rows ? q.dequantized[r * cols + k] : 0.0;
          ASSERT_NEAR(got, want, 1e-6 * (std::fabs(want) + 1e-3))
              << weight_type_name(type) << " rows=" << rows << " r=" << r << " k=" << k;
        }
    }
}

TEST(WeightPanels, SizesAreCheckedAndNamed) {
  EXPECT_EQ(quant::weight_panels_bytes(WeightType::q4_0, 17, 64), 2 * 2 * (256 + 32));
  EXPECT_EQ(quant::weight_panels_bytes(WeightType::q8_0, 16, 32), 512 + 32);
  EXPECT_EQ(quant::weight_panels_bytes(WeightType::bf16, 20, 5), 2 * 5 * 16 * 2);
  EXPECT_NE(testing::error_of([] { quant::weight_panels_bytes(WeightType::f32, 16, 32); }).find("no panel layout for f32"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { quant::weight_panels_bytes(WeightType::q4_0, 16, 33); }).find("33"), std::string::npos);
  EXPECT_NE(testing::error_of([] { quant::weight_panels_bytes(WeightType::q4_0, int64_t{1} << 40, int64_t{1} << 30); })
                .find("overflow"),
            std::string::npos);
}

TEST(WeightPanels, RowsReadBackAsStored) {
  Rng rng(33);
  for (WeightType type : kPanelTypes) {
    const Quantized q = testing::make_weights(type, 37, type == WeightType::q4_k ? 256 : 64, rng);
    const auto panels = packed(q);
    WeightMatrix with = q.matrix();
    with.panels = panels.data();
    if (!quant::panels_keep_rows(type)) {
      EXPECT_NE(testing::error_of([&] { std::vector<uint8_t> row(1); quant::panel_row_bytes(with, 0, row.data()); }),
                "(no error)");
      continue;
    }
    const int64_t row_bytes = weight_row_bytes(type, q.cols);
    std::vector<uint8_t> row(row_bytes);
    for (int64_t r = 0; r < q.rows; ++r) {
      quant::panel_row_bytes(with, r, row.data());
      ASSERT_EQ(std::memcmp(row.data(), q.bytes.data() + r * row_bytes, row_bytes), 0) << weight_type_name(type) << " r=" << r;
    }
    EXPECT_NE(testing::error_of([&] { quant::panel_row_bytes(with, q.rows, row.data()); }), "(no error)");
  }
}

// The product of every row of x alone, and of the rows in one batch, with and without panels,
// for the types whose GEMM reads panels at this CPU level (ARM: BF16 and F16); at 1 and 2
// threads (1 only under OMP_NUM_THREADS=1: scripts/test-arm64).
TEST(WeightPanels, GemmGivesTheBitsOfRepackingAndEachRowItsOwn) {
  if (std::none_of(std::begin(kPanelTypes), std::end(kPanelTypes),
                  [](WeightType t) { return backends::cpu::kernels().reads_panels(t); }))
    GTEST_SKIP() << "this CPU level's GEMMs have layouts of their own";
  Rng rng(32);
  const int saved = omp_get_max_threads();
  for (WeightType type : kPanelTypes) {
    if (!backends::cpu::kernels().reads_panels(type)) continue;
    const bool floats = type == WeightType::bf16 || type == WeightType::f16;
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{37, 256}, {100, 512}, {5, 2048}, {40, floats ? 33 : 256}}) {
      const Quantized q = testing::make_weights(type, rows, cols, rng);
      const auto panels = packed(q);
      WeightMatrix with = q.matrix();
      with.panels = panels.data();
      const int64_t most = 13;
      const auto x = testing::random_vector(most * cols, rng);
      const auto start = testing::random_vector(most * rows, rng);
      for (bool accumulate : {false, true}) {
        std::vector<float> alone(most * rows);
        for (int64_t n = 0; n < most; ++n) {
          std::copy_n(start.data() + n * rows, rows, alone.data() + n * rows);
          matmul(with, x.data() + n * cols, alone.data() + n * rows, 1, accumulate, MatmulOrder::gemv);
        }
        for (int threads : {1, 2}) {
          if (threads > saved) continue;
          omp_set_num_threads(threads);
          for (int64_t N : {1, 3, 8, 13}) {
            const std::string where = std::string(weight_type_name(type)) + " " + std::to_string(rows) + "x" +
                                      std::to_string(cols) + " N=" + std::to_string(N) + " threads=" +
                                      std::to_string(threads) + " accumulate=" + std::to_string(accumulate);
            auto repacked = start, gemv = start, gemm = start;
            matmul(q.matrix(), x.data(), repacked.data(), N, accumulate, MatmulOrder::gemm);
            matmul(with, x.data(), gemv.data(), N, accumulate, MatmulOrder::gemv);
            matmul(with, x.data(), gemm.data(), N, accumulate, MatmulOrder::gemm);
            repacked.resize(N * rows), gemv.resize(N * rows), gemm.resize(N * rows);
            EXPECT_EQ(gemm, repacked) << where;
            EXPECT_EQ(gemv, repacked) << where;
            EXPECT_TRUE(std::equal(gemv.begin(), gemv.end(), alone.begin())) << where << ": not each row alone";
          }
        }
      }
    }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace difftx::kernels
