// The fused forward runs in O(T) memory (DESIGN: no T x T buffer; a 32K-token forward fits in
// 1 GB). At T = 32768, one head, d = 64, one T x T float map would be 4 GiB. The peak resident
// set growth during the call (Linux VmHWM, in a forked child) must stay under 256 MiB: 1/16
// of a single map. Inputs and outputs (5 x 8 MiB) exist before the mark.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "kernels/attention/attention.h"
#include "support/peak_memory.h"
#include "support/testing.h"

namespace difftx::kernels {
namespace {

TEST(AttentionMemory, ForwardAtT32768NeverHoldsATxTMap) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan build: shadow memory and quarantine make resident-set peaks meaningless here";
#endif
  // First prove the measurement sees a large allocation: touching 512 MiB must raise the peak.
  const int64_t probe_kib = testing::peak_growth_kib_in_child([](const std::function<void()>& mark) {
    mark();
    std::vector<char> probe(int64_t{512} << 20);
    std::memset(probe.data(), 1, probe.size());
  });
  ASSERT_GE(probe_kib, 500 * 1024) << "VmHWM does not track allocations here";

  const int64_t T = 32768, d = 64;
  const AttentionDims dims{AttentionKind::baseline, 1, T, 1, 1, d};
  std::vector<float> q, k, v, out(T * d), lse(T);
  {
    Rng rng(17);
    q = testing::random_vector(T * d, rng, -3, 3), k = testing::random_vector(T * d, rng),
    v = testing::random_vector(T * d, rng);
  }
  // The child inherits the inputs and outputs; its outputs come back through a shared mapping.
  float* shared = static_cast<float*>(::mmap(nullptr, (T * d + T) * sizeof(float), PROT_READ | PROT_WRITE,
                                             MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  const int64_t growth_mib = testing::peak_growth_kib_in_child([&](const std::function<void()>& mark) {
                               std::memset(shared, 0, (T * d + T) * sizeof(float));
                               mark();
                               backends::cpu::kernels().attention_forward(dims, q.data(), k.data(), v.data(), nullptr, shared,
                                                 {shared + T * d, nullptr});
                             }) /
                             1024;
  std::memcpy(out.data(), shared, T * d * sizeof(float));
  std::memcpy(lse.data(), shared + T * d, T * sizeof(float));
  ::munmap(shared, (T * d + T) * sizeof(float));
  RecordProperty("peak_growth_mib", std::to_string(growth_mib));
  EXPECT_LT(growth_mib, 256) << "peak resident set grew by " << growth_mib << " MiB during a T=32768 forward";

  // And the long rows are right: a few rows against a direct double-precision softmax.
  for (int64_t t : {int64_t{0}, int64_t{12345}, T - 1}) {
    std::vector<double> s(t + 1);
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j <= t; ++j) {
      double dot = 0;
      for (int64_t x = 0; x < d; ++x) dot += double(q[t * d + x]) * k[j * d + x];
      mx = std::max(mx, s[j] = dot / std::sqrt(double(d)));
    }
    for (auto& x : s) sum += (x = std::exp(x - mx));
    for (int64_t x = 0; x < d; ++x) {
      double want = 0;
      for (int64_t j = 0; j <= t; ++j) want += s[j] / sum * v[j * d + x];
      EXPECT_NEAR(out[t * d + x], want, 1e-5) << "row " << t;
    }
    EXPECT_NEAR(lse[t], mx + std::log(sum), 1e-4) << "row " << t;
  }
}

}  // namespace
}  // namespace difftx::kernels
