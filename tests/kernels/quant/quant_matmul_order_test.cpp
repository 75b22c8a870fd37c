// Batch invariance of matmul's gemv and gemm orders (MatmulOrder), every weight type: each row of
// an N-row product has the same bits as the row alone, as the row at another place in another
// batch, and at 1 and 2 threads; the gemv order is the decode GEMV (gemv() for F32) and by_size
// below 8 rows, the gemm order at N >= 8 the prefill GEMM of the block types; the gemm order of
// the float types (AVX-512, AVX2 and NEON builds) is one F32 FMA chain per output, checked bit for bit
// against its scalar twin; ARM's i8mm int8 GEMM gives the dotprod level's bits; all close to the
// double reference. (That the row dots kept the bits of the
// single-row kernels they replaced was checked once against the previous build's kernels, not
// here.)
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_level.h"
#include "kernels/quant/gemm_float.h"
#include "kernels/quant/gemm_int8.h"
#include "kernels/quant/matmul.h"
#include "reference/matmul_reference.h"
#include "support/level_kernels.h"
#include "support/quant_weights.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

using difftx::matmul;  // not kernels::matmul, which a unity build may declare before this file
using testing::Quantized;

const MatmulOrder kOrders[] = {MatmulOrder::gemv, MatmulOrder::gemm};
const int64_t kBatches[] = {1, 2, 3, 5, 8, 13, 64, 100};
constexpr int64_t kMostRows = 100;  // the largest batch

bool is_block(WeightType t) { return t == WeightType::q8_0 || t == WeightType::q4_0 || t == WeightType::q4_k; }

const char* order_name(MatmulOrder o) { return o == MatmulOrder::gemv ? "gemv" : "gemm"; }

bool same_bits(const float* a, const float* b, int64_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

// y for the rows of x listed in `pick` (indices into x's rows), each output row starting from
// start's row of the same index (accumulate).
std::vector<float> product(const Quantized& q, const std::vector<float>& x, const std::vector<float>& start,
                           const std::vector<int64_t>& pick, bool accumulate, MatmulOrder order) {
  const int64_t N = static_cast<int64_t>(pick.size());
  std::vector<float> xs(N * q.cols), y(N * q.rows);
  for (int64_t n = 0; n < N; ++n) {
    std::copy_n(x.data() + pick[n] * q.cols, q.cols, xs.data() + n * q.cols);
    std::copy_n(start.data() + pick[n] * q.rows, q.rows, y.data() + n * q.rows);
  }
  matmul(q.matrix(), xs.data(), y.data(), N, accumulate, order);
  return y;
}

void expect_invariant(const Quantized& q, Rng& rng) {
  const int64_t pool = 2 * kMostRows;
  const auto x = testing::random_vector(pool * q.cols, rng);
  const auto start = testing::random_vector(pool * q.rows, rng);
  std::vector<float> want(pool * q.rows);
  for (MatmulOrder order : kOrders)
    for (bool accumulate : {false, true}) {
      want = start;
      reference::matmul(q.matrix(), x.data(), want.data(), pool, accumulate);
      // each row alone: the bits every batch must give
      std::vector<std::vector<float>> alone(pool);
      for (int64_t n = 0; n < kMostRows; ++n) {
        alone[n] = product(q, x, start, {n}, accumulate, order);
        for (int64_t r = 0; r < q.rows; ++r) {  // close to the reference (so is every batch's row: the same bits)
          const double bound = testing::matmul_tolerance(q, x.data() + n * q.cols, r, is_block(q.type)) + 1e-6;
          ASSERT_LE(std::fabs(alone[n][r] - want[n * q.rows + r]), bound)
              << weight_type_name(q.type) << " " << order_name(order) << " rows=" << q.rows << " cols=" << q.cols
              << " n=" << n << " accumulate=" << accumulate << " r=" << r;
        }
      }
      std::mt19937 shuffler(static_cast<uint32_t>(q.rows * 131 + q.cols));
      for (int64_t N : kBatches) {
        std::vector<int64_t> batch(N), other;  // other: the batch reversed, between rows from the pool's second half
        for (int64_t n = 0; n < N; ++n) batch[n] = n;
        for (int64_t n = N - 1; n >= 0; --n) other.push_back(n), other.push_back(kMostRows + (n * 7) % kMostRows);
        // shuffled: the batch and as many rows of the second half, in a random order; at[n]: where row n went
        std::vector<int64_t> shuffled(2 * N), at(N);
        std::iota(shuffled.begin(), shuffled.begin() + N, 0);
        for (int64_t n = 0; n < N; ++n) shuffled[N + n] = kMostRows + (n * 13 + 5) % kMostRows;
        std::shuffle(shuffled.begin(), shuffled.end(), shuffler);
        for (int64_t i = 0; i < 2 * N; ++i)
          if (shuffled[i] < N) at[shuffled[i]] = i;
        const auto y = product(q, x, start, batch, accumulate, order);
        const auto y_other = product(q, x, start, other, accumulate, order);
        const auto y_shuffled = product(q, x, start, shuffled, accumulate, order);
        for (int64_t n = 0; n < N; ++n) {
          const std::string where = std::string(weight_type_name(q.type)) + " " + order_name(order) +
                                    " rows=" + std::to_string(q.rows) + " cols=" + std::to_string(q.cols) +
                                    " N=" + std::to_string(N) + " n=" + std::to_string(n) +
                                    " accumulate=" + std::to_string(accumulate);
          const float* row = y.data() + n * q.rows;
          ASSERT_TRUE(same_bits(row, alone[n].data(), q.rows)) << where << ": not the row alone";
          ASSERT_TRUE(same_bits(row, y_other.data() + 2 * (N - 1 - n) * q.rows, q.rows)) << where << ": not the row in another batch";
          ASSERT_TRUE(same_bits(row, y_shuffled.data() + at[n] * q.rows, q.rows)) << where << ": not the row in a shuffled batch";
        }
      }
    }
}

std::vector<std::pair<int64_t, int64_t>> shapes_for(WeightType type) {
  switch (type) {
    case WeightType::q4_k: return {{37, 512}, {5, 256}};
    case WeightType::q8_0:
    case WeightType::q4_0: return {{37, 288}, {5, 96}, {50, 32}};
    default: return {{37, 300}, {5, 17}, {50, 96}};
  }
}

TEST(QuantMatmulOrder, EachRowHasItsOwnBitsWhateverTheBatch) {
  Rng rng(21);
  for (WeightType type : testing::kWeightTypes)
    for (auto [rows, cols] : shapes_for(type)) expect_invariant(testing::make_weights(type, rows, cols, rng), rng);
}

TEST(QuantMatmulOrder, EachRowHasItsOwnBitsAtModelWidth) {
  Rng rng(22);
  for (WeightType type : testing::kWeightTypes) expect_invariant(testing::make_weights(type, 67, 2048, rng), rng);
}

// The gemv order is the decode GEMV (by_size at N < 8); the gemm order of the block types is the
// prefill GEMM (by_size at N >= 8).
TEST(QuantMatmulOrder, OrdersAreTheGemvAndTheGemm) {
  Rng rng(23);
  for (WeightType type : testing::kWeightTypes) {
    const Quantized q = testing::make_weights(type, 37, type == WeightType::q4_k ? 512 : 288, rng);
    for (bool accumulate : {false, true}) {
      const auto x = testing::random_vector(16 * q.cols, rng);
      const auto start = testing::random_vector(16 * q.rows, rng);
      for (int64_t N : {1, 3, 7}) {
        auto by_size = start, gemv = start;
        matmul(q.matrix(), x.data(), by_size.data(), N, accumulate);
        matmul(q.matrix(), x.data(), gemv.data(), N, accumulate, MatmulOrder::gemv);
        EXPECT_EQ(by_size, gemv) << weight_type_name(type) << " N=" << N;
        if (type != WeightType::f32) continue;
        auto single = start;  // F32: the GEMV a row at a time
        for (int64_t n = 0; n < N; ++n)
          matmul(q.matrix(), x.data() + n * q.cols, single.data() + n * q.rows, 1, accumulate, MatmulOrder::gemv);
        EXPECT_EQ(single, gemv) << "f32 N=" << N;
      }
      // by_size takes the int8 GEMM from 8 rows on where the CPU level has one (else widened panels)
      if (!is_block(type) || !backends::cpu::kernels().gemm_int8_available(type)) continue;
      for (int64_t N : {8, 16}) {
        auto by_size = start, gemm = start;
        matmul(q.matrix(), x.data(), by_size.data(), N, accumulate);
        matmul(q.matrix(), x.data(), gemm.data(), N, accumulate, MatmulOrder::gemm);
        EXPECT_EQ(by_size, gemm) << weight_type_name(type) << " N=" << N;
      }
    }
  }
}

TEST(QuantMatmulOrder, SameBitsForOneAndTwoThreads) {
  Rng rng(24);
  const int saved = omp_get_max_threads();
  for (WeightType type : testing::kWeightTypes) {
    const Quantized q = testing::make_weights(type, 600, 512, rng);
    for (MatmulOrder order : kOrders)
      for (int64_t N : {1, 5, 40, 100}) {
        const auto x = testing::random_vector(N * q.cols, rng);
        std::vector<float> runs[2];
        for (int threads : {1, 2}) {
          omp_set_num_threads(threads);
          runs[threads - 1].assign(N * q.rows, 0.0f);
          matmul(q.matrix(), x.data(), runs[threads - 1].data(), N, false, order);
        }
        EXPECT_EQ(runs[0], runs[1]) << weight_type_name(type) << " " << order_name(order) << " N=" << N;
      }
  }
  omp_set_num_threads(saved);
}

// The float types' gemm order where the float GEMM is built (gemm_float.h: AVX-512, AVX2, NEON):
// each output is acc = fma(x[k], w[k], acc) in F32 for k = 0 .. cols - 1 from zero, then acc or
// y + acc. The scalar twin below states that chain; the kernel must give its bits for every row
// of every batch (any N, any tile and tail tile, 1 to 3 panels per span, columns past a multiple
// of 4, 8 and 16), at 1 and 2 threads (1 only under OMP_NUM_THREADS=1: scripts/test-arm64).
std::vector<float> float_gemm_twin(const Quantized& q, const float* x, const float* start, int64_t N, bool accumulate) {
  std::vector<float> y(start, start + N * q.rows);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t r = 0; r < q.rows; ++r) {
      float acc = 0.0f;
      for (int64_t k = 0; k < q.cols; ++k) acc = std::fma(x[n * q.cols + k], q.dequantized[r * q.cols + k], acc);
      float& out = y[n * q.rows + r];
      out = accumulate ? out + acc : acc;
    }
  return y;
}

TEST(QuantMatmulOrder, FloatGemmIsOneFmaChainPerOutput) {
  if (!backends::cpu::kernels().gemm_float_available(WeightType::f32)) GTEST_SKIP() << "no float GEMM in this build (gemv order)";
  Rng rng(25);
  const int saved = omp_get_max_threads();
  for (WeightType type : {WeightType::f32, WeightType::bf16, WeightType::f16})
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{37, 300}, {5, 17}, {50, 96}, {67, 2048}, {100, 33}}) {
      const Quantized q = testing::make_weights(type, rows, cols, rng);
      for (int64_t N : {1, 3, 8, 13, 100})
        for (bool accumulate : {false, true})
          for (int threads : {1, 2}) {
            if (threads > saved) continue;
            omp_set_num_threads(threads);
            const auto x = testing::random_vector(N * cols, rng);
            const auto start = testing::random_vector(N * rows, rng);
            auto y = start;
            matmul(q.matrix(), x.data(), y.data(), N, accumulate, MatmulOrder::gemm);
            EXPECT_EQ(y, float_gemm_twin(q, x.data(), start.data(), N, accumulate))
                << weight_type_name(type) << " rows=" << rows << " cols=" << cols << " N=" << N
                << " accumulate=" << accumulate << " threads=" << threads;
          }
    }
  omp_set_num_threads(saved);
}

// ARM's int8 GEMM multiplies with smmla at the i8mm level and with sdot at dotprod: the same
// integer block sums before the same F32 steps, so the same bits, for tail panels and every tail
// tile (odd ones pair an x row with a zero row). Skips unless this CPU runs both levels.
TEST(QuantMatmulOrder, I8mmGemmGivesTheDotprodBits) {
  const auto runs = [](CpuLevel level) { return std::ranges::count(cpu_levels_runnable(), level) > 0; };
  if (!runs(CpuLevel::i8mm) || !runs(CpuLevel::dotprod))
    GTEST_SKIP() << "this CPU does not run levels i8mm and dotprod";
  Rng rng(26);
  for (WeightType type : {WeightType::q8_0, WeightType::q4_0, WeightType::q4_k}) {
    const Quantized q = testing::make_weights(type, 37, 512, rng);
    for (int64_t N : {1, 2, 3, 4, 5, 7, 13})
      for (bool accumulate : {false, true}) {
        const auto x = testing::random_vector(N * q.cols, rng);
        const auto start = testing::random_vector(N * q.rows, rng);
        std::vector<float> y[2] = {start, start};
        for (int i = 0; i < 2; ++i)
          backends::cpu::kernels(i == 0 ? CpuLevel::dotprod : CpuLevel::i8mm)
              .matmul_by_order(q.matrix(), x.data(), y[i].data(), N, accumulate, MatmulOrder::gemm);
        EXPECT_EQ(y[0], y[1]) << weight_type_name(type) << " N=" << N << " accumulate=" << accumulate;
      }
  }
}

}  // namespace
}  // namespace difftx::kernels
