// The Vulkan backend's hybrid ops (ops_hybrid.cpp) on a backend that binds at most 4 KiB: the
// LayerNorm and bias rows, the Mamba prompt cut into dispatches over T (each continuing the window
// and state the last left) and the step over a pool of slots give the bits of the whole, with the
// validation layer on; LayerNorm's backward (training's) an error naming it. Their values against
// the double references are the conformance suite's (conformance_hybrid_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_backend.h"
#include "core/rng.h"
#include "kernels/mamba.h"
#include "support/testing.h"
#include "support/vulkan_fixture.h"

namespace difftx {
namespace {

using backends::DeviceBuffer;
using backends::DevicePtr;
using backends::vulkan::VulkanBackend;
using testing::VulkanTest;

std::vector<float> random_floats(int64_t n, Rng& rng, double lo = -1, double hi = 1) {
  return testing::random_vector(n, rng, lo, hi);
}

// Host vectors on one backend, and back.
struct On {
  VulkanBackend& b;
  DeviceBuffer put(const std::vector<float>& v) {
    DeviceBuffer d = b.allocate(static_cast<int64_t>(v.size() * sizeof(float)) + 16);
    b.upload(d.as<void>(), v.data(), static_cast<int64_t>(v.size() * sizeof(float)));
    return d;
  }
  DeviceBuffer put(const std::vector<int32_t>& v) {
    DeviceBuffer d = b.allocate(static_cast<int64_t>(v.size() * sizeof(int32_t)) + 16);
    b.upload(d.as<void>(), v.data(), static_cast<int64_t>(v.size() * sizeof(int32_t)));
    return d;
  }
  std::vector<float> get(const DeviceBuffer& d, size_t n) {
    std::vector<float> v(n);
    b.download(v.data(), d.as<const void>(), static_cast<int64_t>(n * sizeof(float)));
    return v;
  }
};

// Every output of the hybrid ops on one backend, for inputs drawn from `seed`.
std::vector<std::vector<float>> hybrid_outputs(VulkanBackend& backend, uint64_t seed) {
  On on{backend};
  Rng rng(seed);
  std::vector<std::vector<float>> out;
  {  // LayerNorm: 20 rows of 100 (10 rows a binding)
    const int64_t rows = 20, n = 100;
    const DeviceBuffer x = on.put(random_floats(rows * n, rng, -3, 5)), w = on.put(random_floats(n, rng));
    const DeviceBuffer b = on.put(random_floats(n, rng)), y = on.put(std::vector<float>(rows * n));
    const DeviceBuffer mean = on.put(std::vector<float>(rows)), rstd = on.put(std::vector<float>(rows));
    backend.layernorm_forward(x.as<const float>(), w.as<const float>(), b.as<const float>(), y.as<float>(),
                              mean.as<float>(), rstd.as<float>(), rows, n, 1e-5f);
    out.push_back(on.get(y, rows * n)), out.push_back(on.get(mean, rows)), out.push_back(on.get(rstd, rows));
  }
  {  // the bias: 30 rows of 50
    const DeviceBuffer y = on.put(random_floats(30 * 50, rng)), bias = on.put(random_floats(50, rng));
    backend.add_bias(y.as<float>(), bias.as<const float>(), 30, 50);
    out.push_back(on.get(y, 30 * 50));
  }
  {  // Mamba's prompt: 40 tokens of 64 channels (15 rows of x a binding)
    const kernels::MambaDims dims{64, 8, 4};
    const int64_t E = 64, S = 8, K = 4, T = 40, ld_x = E + 3, ld_bc = 2 * S + 1;
    const DeviceBuffer x = on.put(random_floats(T * ld_x, rng, -2, 2)), w = on.put(random_floats(E * K, rng));
    const DeviceBuffer bias = on.put(random_floats(E, rng)), window = on.put(random_floats((K - 1) * E, rng));
    const DeviceBuffer dt_in = on.put(random_floats(T * E, rng, -4, 1)), dt_bias = on.put(random_floats(E, rng));
    const DeviceBuffer a_log = on.put(random_floats(E * S, rng, -1, 2)), bc = on.put(random_floats(T * ld_bc, rng));
    const DeviceBuffer D = on.put(random_floats(E, rng)), state = on.put(random_floats(E * S, rng));
    const DeviceBuffer u = on.put(std::vector<float>(T * E)), y = on.put(std::vector<float>(T * E));
    backend.mamba_conv_prompt(dims, T, x.as<const float>(), ld_x, w.as<const float>(), bias.as<const float>(),
                              window.as<float>(), u.as<float>());
    backend.mamba_scan_prompt(dims, T, u.as<const float>(), dt_in.as<const float>(), dt_bias.as<const float>(),
                              a_log.as<const float>(), bc.as<const float>(), bc.as<const float>() + S, ld_bc,
                              D.as<const float>(), state.as<float>(), y.as<float>());
    for (const auto& [buffer, n] : {std::pair{&u, T * E}, {&y, T * E}, {&window, (K - 1) * E}, {&state, E * S}})
      out.push_back(on.get(*buffer, n));
  }
  {  // Mamba's step: 3 rows in slots 2, 0 and 1 of a pool of 3
    const kernels::MambaDims dims{16, 8, 4};
    const int64_t E = 16, S = 8, K = 4, rows = 3, ld_x = E, ld_bc = 2 * S;
    const DeviceBuffer x = on.put(random_floats(rows * ld_x, rng, -2, 2)), w = on.put(random_floats(E * K, rng));
    const DeviceBuffer bias = on.put(random_floats(E, rng)), windows = on.put(random_floats(3 * (K - 1) * E, rng));
    const DeviceBuffer dt_in = on.put(random_floats(rows * E, rng, -4, 1)), dt_bias = on.put(random_floats(E, rng));
    const DeviceBuffer a_log = on.put(random_floats(E * S, rng)), bc = on.put(random_floats(rows * ld_bc, rng));
    const DeviceBuffer D = on.put(random_floats(E, rng)), states = on.put(random_floats(3 * E * S, rng));
    const DeviceBuffer slots = on.put(std::vector<int32_t>{2, 0, 1});
    const DeviceBuffer u = on.put(std::vector<float>(rows * E)), y = on.put(std::vector<float>(rows * E));
    backend.mamba_conv_step(dims, rows, x.as<const float>(), ld_x, w.as<const float>(), bias.as<const float>(),
                            windows.as<float>(), slots.as<const int32_t>(), u.as<float>(), OptionSpelling::field);
    backend.mamba_scan_step(dims, rows, u.as<const float>(), dt_in.as<const float>(), dt_bias.as<const float>(),
                            a_log.as<const float>(), bc.as<const float>(), bc.as<const float>() + S, ld_bc,
                            D.as<const float>(), states.as<float>(), slots.as<const int32_t>(), y.as<float>(),
                            OptionSpelling::field);
    for (const auto& [buffer, n] : {std::pair{&u, rows * E}, {&y, rows * E}, {&windows, 3 * (K - 1) * E},
                                    {&states, 3 * E * S}})
      out.push_back(on.get(*buffer, n));
  }
  return out;
}

TEST_F(VulkanTest, HybridOpsOverSmallBindingsGiveTheSameBits) {
  const auto small_bindings = open_small_bindings();
  const auto whole = hybrid_outputs(vk(), 61), cut = hybrid_outputs(*small_bindings, 61);
  ASSERT_EQ(whole.size(), cut.size());
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(whole[i], cut[i]) << "output " << i;
  expect_no_validation_messages(*small_bindings);
}

// A step op's pool of states that one binding cannot hold whole is an error naming the option
// that shrinks it as the caller writes it (the CLI's flag, the library's field), never a slot
// silently left out.
TEST_F(VulkanTest, AStatePoolPastOneBindingIsAnErrorNamingMaxRunning) {
  const auto small_bindings = open_small_bindings();  // 4 KiB: 7 states of 16 x 8 floats
  VulkanBackend& b = *small_bindings;
  const kernels::MambaDims dims{16, 8, 4};
  const DeviceBuffer rows = b.allocate(64 * 16 * 4), states = b.allocate(16 * 16 * 8 * 4), slots = b.allocate(16);
  const DevicePtr<const float> f = rows.as<const float>();
  for (const OptionSpelling spelling : {OptionSpelling::flag, OptionSpelling::field}) {
    const std::string message = testing::error_of([&] {
      b.mamba_scan_step(dims, 1, f, f, f, f, f, f, 16, f, states.as<float>(), slots.as<const int32_t>(),
                        rows.as<float>(), spelling);
    });
    EXPECT_NE(message.find("16 slots"), std::string::npos) << message;
    EXPECT_NE(message.find(spelling == OptionSpelling::flag ? "fewer with --max-running (or --draft-tokens)"
                                                            : "fewer with max_running (or draft_tokens)"),
              std::string::npos)
        << message;
  }
}

TEST_F(VulkanTest, LayerNormBackwardIsAnErrorNamingIt) {
  const DeviceBuffer buf = vk().allocate(256);
  const DevicePtr<float> f = buf.as<float>();
  const std::string message = testing::error_of([&] { vk().layernorm_backward(f, f, f, f, f, f, f, f, 1, 4); });
  EXPECT_NE(message.find("layernorm_backward"), std::string::npos) << message;
  EXPECT_NE(message.find(vk().info().name), std::string::npos) << message;
}

}  // namespace
}  // namespace difftx
