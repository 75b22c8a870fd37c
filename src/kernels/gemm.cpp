#include "kernels/gemm.h"

#include <cblas.h>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>
#include <strings.h>

#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"

extern "C" {
char* openblas_get_corename(void);
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace difftx::kernels {
namespace {

// OpenBLAS (DYNAMIC_ARCH builds, as Debian's) picks its kernels when the library loads, from
// OPENBLAS_CORETYPE or its own CPU detection. Its detection (0.3.21) does not know Zen 4/5 and
// falls back to the AVX2 Haswell kernels, at well under the sgemm rate of its AVX-512
// SkylakeX kernels, and machine images often pin OPENBLAS_CORETYPE=Haswell for the same
// reason. So at start-up, on an AVX-512 CPU, we ask OpenBLAS to choose again (its exported
// gotoblas_dynamic_quit/init) with SkylakeX. A DIFFTX_CPU of avx2 or avxvnni takes the Haswell
// kernels instead, so that a forced level runs as on a CPU without AVX-512, the BLAS included.
// DIFFTX_BLAS_CORETYPE=NAME overrides the choice.
// A build without dynamic dispatch lacks the two functions (weak symbols) and keeps its kernels.
std::string g_kernel_reason = "OpenBLAS's own choice";

bool cpu_has_avx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

bool cpu_has_avx2() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// DIFFTX_CPU names one of the 256-bit x86 levels (read here at load, before the kernels'
// dispatch reads it; a bad name is left for cpu_level() to report).
bool forced_to_256_bit_level() {
  const char* forced = std::getenv("DIFFTX_CPU");
  return forced && (std::strcmp(forced, "avx2") == 0 || std::strcmp(forced, "avxvnni") == 0);
}

void select_openblas_kernels() {
  std::string want;
  if (const char* forced = std::getenv("DIFFTX_BLAS_CORETYPE")) {
    want = forced;
    g_kernel_reason = "DIFFTX_BLAS_CORETYPE set by the user";
  } else if (forced_to_256_bit_level() && cpu_has_avx2()) {
    want = "Haswell";
    g_kernel_reason = "DIFFTX_CPU forces a 256-bit level: difftx selected OpenBLAS's Haswell kernels";
  } else if (cpu_has_avx512()) {
    want = "SkylakeX";
    g_kernel_reason = "AVX-512 CPU: difftx selected OpenBLAS's SkylakeX kernels";
  }
  if (want.empty() || gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr) return;
  if (strcasecmp(openblas_get_corename(), want.c_str()) == 0) return;
  setenv("OPENBLAS_CORETYPE", want.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
}

const bool g_kernels_selected = (select_openblas_kernels(), true);

CBLAS_TRANSPOSE to_cblas(Trans t) { return t == Trans::N ? CblasNoTrans : CblasTrans; }

}  // namespace

void gemm(Trans ta, Trans tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  DIFFTX_CHECK(M >= 0 && N >= 0 && K >= 0, "gemm: negative size M=", M, " N=", N, " K=", K);
  if (M == 0 || N == 0) return;
  if (K == 0) {  // C = beta * C; BLAS rejects the zero leading dimensions this shape implies
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  cblas_sgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), static_cast<blasint>(M),
              static_cast<blasint>(N), static_cast<blasint>(K), alpha, A, static_cast<blasint>(lda),
              B, static_cast<blasint>(ldb), beta, C, static_cast<blasint>(ldc));
}

void gemm(Trans ta, Trans tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          const float* B, float beta, float* C) {
  const int64_t lda = ta == Trans::N ? K : M;
  const int64_t ldb = tb == Trans::N ? N : K;
  gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, N);
}

double measure_sgemm_gflops(int64_t n, double seconds) {
  std::vector<float> a(n * n), b(n * n), c(n * n);
  Rng rng(1);
  for (auto& x : a) x = static_cast<float>(rng.uniform(-1, 1));
  for (auto& x : b) x = static_cast<float>(rng.uniform(-1, 1));
  gemm(Trans::N, Trans::N, n, n, n, 1.0f, a.data(), b.data(), 0.0f, c.data());  // warm-up
  double best = 1e30;
  Timer total;
  for (int run = 0; run < 3 || total.seconds() < seconds; ++run) {
    Timer t;
    gemm(Trans::N, Trans::N, n, n, n, 1.0f, a.data(), b.data(), 0.0f, c.data());
    best = std::min(best, t.seconds());
  }
  return 2.0 * n * n * n / best / 1e9;
}

std::string gemm_kernel_name() { return openblas_get_corename(); }
std::string gemm_kernel_reason() { return g_kernel_reason; }

}  // namespace difftx::kernels
