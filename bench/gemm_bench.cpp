// sgemm rate through difftx::gemm, the yardstick every other figure is compared against.
#include "benches.h"

#include <vector>

#include "core/rng.h"
#include "kernels/gemm.h"
#include "measure.h"

namespace difftx::bench {

int bench_gemm(cli::Args& args) {
  const bool json = args.flag("json");
  args.finish();
  if (!json)
    std::printf("OpenBLAS kernels: %s (%s)\n", kernels::gemm_kernel_name().c_str(),
                kernels::gemm_kernel_reason().c_str());
  for (int64_t n : {256, 512, 1024, 2048}) {
    std::vector<float> a(n * n), b(n * n), c(n * n);
    Rng rng(1);
    for (auto& x : a) x = static_cast<float>(rng.uniform(-1, 1));
    for (auto& x : b) x = static_cast<float>(rng.uniform(-1, 1));
    for (kernels::Trans tb : {kernels::Trans::N, kernels::Trans::T}) {
      Timing t =
          measure([&] { kernels::gemm(kernels::Trans::N, tb, n, n, n, 1.0f, a.data(), b.data(), 0.0f, c.data()); });
      const double gflops = 2.0 * n * n * n / (t.best_ms * 1e-3) / 1e9;
      print_row(json, {str("op", "gemm"), str("variant", tb == kernels::Trans::N ? "NN" : "NT"),
                       num("M", n, 0), num("N", n, 0), num("K", n, 0), num("gflops", gflops, 1),
                       num("ms", t.best_ms, 3), str("kernel", kernels::gemm_kernel_name())});
    }
  }
  return 0;
}

}  // namespace difftx::bench
