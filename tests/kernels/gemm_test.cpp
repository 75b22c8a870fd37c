#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernels/gemm.h"

namespace difftx::kernels {
namespace {

// Plain triple loop in double: the reference twin of gemm.
std::vector<float> gemm_reference(Trans ta, Trans tb, int M, int N, int K, const std::vector<float>& A,
                                  const std::vector<float>& B, float beta, std::vector<float> C) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) {
        const double a = ta == Trans::N ? A[i * K + k] : A[k * M + i];
        const double b = tb == Trans::N ? B[k * N + j] : B[j * K + k];
        acc += a * b;
      }
      C[i * N + j] = static_cast<float>(acc + beta * C[i * N + j]);
    }
  return C;
}

TEST(Gemm, MatchesReferenceForEveryTransposeAndAwkwardShapes) {
  Rng rng(7);
  for (auto [M, N, K] : {std::tuple{1, 1, 1}, {3, 5, 7}, {17, 33, 65}, {64, 1, 129}, {5, 4, 0}}) {
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T}) {
        std::vector<float> A(M * K), B(K * N), C(M * N);
        for (auto& x : A) x = static_cast<float>(rng.uniform(-1, 1));
        for (auto& x : B) x = static_cast<float>(rng.uniform(-1, 1));
        for (auto& x : C) x = static_cast<float>(rng.uniform(-1, 1));
        const auto want = gemm_reference(ta, tb, M, N, K, A, B, 0.5f, C);
        gemm(ta, tb, M, N, K, 1.0f, A.data(), B.data(), 0.5f, C.data());
        for (int i = 0; i < M * N; ++i) ASSERT_NEAR(C[i], want[i], 1e-4f) << "M=" << M << " N=" << N << " K=" << K;
      }
  }
}

// On an AVX-512 CPU OpenBLAS runs its SkylakeX kernels, or its Haswell ones when DIFFTX_CPU forces
// a 256-bit level (the kernels are chosen when the library loads, so each case is its own process).
TEST(Gemm, SelectsTheKernelsOfTheLevel) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU";
#else
  GTEST_SKIP() << "not an x86-64 build";
#endif
  if (std::getenv("DIFFTX_BLAS_CORETYPE")) GTEST_SKIP() << "DIFFTX_BLAS_CORETYPE set by the user";
  const char* forced = std::getenv("DIFFTX_CPU");
  const std::string level = forced ? forced : "";
  const std::string want = level == "avx2" || level == "avxvnni" ? "Haswell" : "SkylakeX";
  EXPECT_NE(gemm_kernel_name().find(want), std::string::npos) << gemm_kernel_name();
}

}  // namespace
}  // namespace difftx::kernels
