// The conformance suite, products: matmul for every weight type in every order (each row of a
// batch with the bits it has alone), the dense GEMM in its four transposes, and the embedding
// lookup, on every backend against the double references.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "reference/matmul_reference.h"
#include "support/backend_case.h"
#include "support/quant_weights.h"
#include "support/testing.h"

namespace difftx::testing {

using kernels::MatmulOrder;
using kernels::Trans;
using kernels::WeightType;

namespace {

class ConformanceMatmul : public Conformance {};

bool is_block(WeightType t) { return t == WeightType::q8_0 || t == WeightType::q4_0 || t == WeightType::q4_k; }

// A matrix on the device, in its stored form and in the backend's prepared one.
struct DeviceWeights {
  DeviceWeights(backends::Backend& b, const Quantized& q)
      : bytes(b, q.bytes),
        stored{q.type, bytes.ptr(), q.rows, q.cols, {}},
        prepared(b.prepare_matrix(stored, false, false)) {}
  DeviceArray<uint8_t> bytes;
  backends::DeviceMatrix stored;
  backends::PreparedMatrix prepared;
};

TEST_P(ConformanceMatmul, EveryTypeAndOrderMatchesTheReference) {
  Rng rng(21);
  for (WeightType type : testing::kWeightTypes)
    for (int64_t rows : {1, 19, 64}) {
      const int64_t cols = type == WeightType::q4_k ? 512 : is_block(type) ? 96 : 67;
      const Quantized q = make_weights(type, rows, cols, rng);
      const DeviceWeights w(backend(), q);
      for (int64_t N : {1, 3, 9})
        for (bool accumulate : {false, true})
          for (MatmulOrder order : {MatmulOrder::by_size, MatmulOrder::gemv, MatmulOrder::gemm})
            for (const backends::DeviceMatrix* m : {&w.stored, &w.prepared.matrix}) {
              const auto x = random_vector(N * cols, rng);
              const auto start = random_vector(N * rows, rng);
              auto y = on_device(start);
              backend().matmul(*m, on_device(x), y, N, accumulate, order);
              std::vector<float> want = start;
              reference::matmul(q.matrix(), x.data(), want.data(), N, accumulate);
              const auto got = y.read();
              for (int64_t n = 0; n < N; ++n)
                for (int64_t r = 0; r < rows; ++r) {
                  const double bound = matmul_tolerance(q, x.data() + n * cols, r, is_block(type),
                                                        backend().matmul_input_rounding(type)) +
                                       1e-6;
                  ASSERT_LE(std::fabs(got[n * rows + r] - want[n * rows + r]), bound)
                      << kernels::weight_type_name(type) << " rows=" << rows << " N=" << N
                      << " accumulate=" << accumulate << " order=" << static_cast<int>(order)
                      << (m == &w.stored ? " stored" : " prepared");
                }
            }
    }
}

// A narrow matrix of many columns, whose columns the Vulkan cooperative-matrix GEMM splits into
// slices added up after (ops_matmul.cpp gemm_slices: 2 here), against the reference, and a row's
// bits alone and in the batch.
TEST_P(ConformanceMatmul, ManyColumnsMatchTheReferenceInEveryOrder) {
  Rng rng(23);
  for (WeightType type : testing::kWeightTypes) {
    const int64_t rows = 19, cols = type == WeightType::q4_k ? 2304 : 2112, N = 9;
    const Quantized q = make_weights(type, rows, cols, rng);
    const DeviceWeights w(backend(), q);
    const auto x = random_vector(N * cols, rng);
    for (bool accumulate : {false, true})
      for (MatmulOrder order : {MatmulOrder::gemv, MatmulOrder::gemm}) {
        const auto start = random_vector(N * rows, rng);
        auto y = on_device(start);
        backend().matmul(w.prepared.matrix, on_device(x), y, N, accumulate, order);
        std::vector<float> want = start;
        reference::matmul(q.matrix(), x.data(), want.data(), N, accumulate);
        const auto got = y.read();
        for (int64_t n = 0; n < N; ++n)
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_LE(std::fabs(got[n * rows + r] - want[n * rows + r]),
                      matmul_tolerance(q, x.data() + n * cols, r, is_block(type), backend().matmul_input_rounding(type)) +
                          1e-6)
                << kernels::weight_type_name(type) << " accumulate=" << accumulate << " order=" << static_cast<int>(order);
        if (accumulate) continue;
        const std::vector<float> last(x.end() - cols, x.end());
        auto one = zeros<float>(rows);
        backend().matmul(w.prepared.matrix, on_device(last), one, 1, false, order);
        EXPECT_EQ(one.read(), std::vector<float>(got.end() - rows, got.end()))
            << kernels::weight_type_name(type) << " order=" << static_cast<int>(order);
      }
  }
}

// The engine's orders: a row's bits are the ones it has alone, whatever the batch around it.
TEST_P(ConformanceMatmul, EachRowHasItsOwnBitsInTheEngineOrders) {
  Rng rng(22);
  for (WeightType type : testing::kWeightTypes) {
    const int64_t rows = 37, cols = type == WeightType::q4_k ? 256 : 128;
    const Quantized q = make_weights(type, rows, cols, rng);
    const DeviceWeights w(backend(), q);
    const int64_t N = 11;
    const auto x = random_vector(N * cols, rng);
    for (MatmulOrder order : {MatmulOrder::gemv, MatmulOrder::gemm}) {
      auto all = zeros<float>(N * rows);
      backend().matmul(w.prepared.matrix, on_device(x), all, N, false, order);
      const auto batch = all.read();
      for (int64_t n = 0; n < N; n += 4) {
        const std::vector<float> xn(x.begin() + n * cols, x.begin() + (n + 1) * cols);
        auto one = zeros<float>(rows);
        backend().matmul(w.prepared.matrix, on_device(xn), one, 1, false, order);
        const std::vector<float> row(batch.begin() + n * rows, batch.begin() + (n + 1) * rows);
        EXPECT_EQ(one.read(), row) << kernels::weight_type_name(type) << " order=" << static_cast<int>(order)
                                   << " row " << n;
      }
    }
  }
}

TEST_P(ConformanceMatmul, GemmInEveryTranspose) {
  if (!backend().trains()) GTEST_SKIP() << GetParam().name << " does not train (gemm is training's product)";
  Rng rng(23);
  const int64_t M = 7, N = 13, K = 29;
  for (Trans ta : {Trans::N, Trans::T})
    for (Trans tb : {Trans::N, Trans::T}) {
      const auto A = random_vector(M * K, rng), B = random_vector(K * N, rng), C0 = random_vector(M * N, rng);
      auto C = on_device(C0);
      backend().gemm(ta, tb, M, N, K, 0.5f, on_device(A), on_device(B), 2.0f, C);
      std::vector<double> want(M * N);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = 0;
          for (int64_t k = 0; k < K; ++k)
            s += double(ta == Trans::N ? A[i * K + k] : A[k * M + i]) * (tb == Trans::N ? B[k * N + j] : B[j * K + k]);
          want[i * N + j] = 0.5 * s + 2.0 * C0[i * N + j];
        }
      const auto got = C.read();
      for (int64_t i = 0; i < M * N; ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5) << "ta=" << int(ta) << " tb=" << int(tb) << " element " << i;
    }
}

TEST_P(ConformanceMatmul, EmbedWidensTheRowsOfEveryType) {
  Rng rng(24);
  for (WeightType type : testing::kWeightTypes) {
    const int64_t V = 21, D = type == WeightType::q4_k ? 256 : 64;
    const Quantized q = make_weights(type, V, D, rng);
    const DeviceWeights w(backend(), q);
    const std::vector<int32_t> ids = {20, 0, 7, 7, 3};
    auto out = zeros<float>(5 * D);
    backend().embed(w.stored, on_device(ids), out, 5);
    std::vector<float> want;
    for (int32_t id : ids) want.insert(want.end(), q.dequantized.begin() + id * D, q.dequantized.begin() + (id + 1) * D);
    EXPECT_EQ(out.read(), want) << kernels::weight_type_name(type);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ConformanceMatmul, ::testing::ValuesIn(backends_under_test()), backend_test_name);

}  // namespace
}  // namespace difftx::testing
