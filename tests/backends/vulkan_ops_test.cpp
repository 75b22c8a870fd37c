// The Vulkan row-wise and element-wise ops against their double references (ops_reference.h,
// polynorm.h) on awkward shapes; DIFF's lambda against its formula in double; and the training
// ops, which stay on the CPU, refusing by name.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "kernels/ops.h"
#include "kernels/polynorm.h"
#include "reference/ops_reference.h"
#include "reference/polynorm_reference.h"
#include "support/testing.h"
#include "support/vulkan_fixture.h"

namespace difftx {
namespace {

using backends::DeviceBuffer;
using testing::VulkanTest;

std::vector<double> widen(const std::vector<float>& x) { return {x.begin(), x.end()}; }

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), atol + rtol * std::fabs(want[i])) << what << " at " << i;
}

TEST_F(VulkanTest, RmsNormMatchesReference) {
  Rng rng(21);
  for (auto [rows, n] : {std::pair<int64_t, int64_t>{1, 1}, {3, 7}, {5, 129}, {17, 1000}}) {
    const auto x = testing::random_vector(rows * n, rng, -3, 3), g = testing::random_vector(n, rng);
    std::vector<double> y(rows * n), rstd(rows);
    reference::rmsnorm_forward(widen(x).data(), widen(g).data(), y.data(), rstd.data(), rows, n, 1e-5);
    const DeviceBuffer xd = to_device(x), gd = to_device(g), yd = vk().allocate(rows * n * 4),
                       rd = vk().allocate(rows * 4);
    vk().rmsnorm_forward(xd.as<const float>(), gd.as<const float>(), yd.as<float>(), rd.as<float>(), rows, n, 1e-5f);
    const std::string what = "rmsnorm " + std::to_string(rows) + " x " + std::to_string(n);
    expect_close(to_host<float>(yd, rows * n), y, 1e-6, 2e-6, what);
    expect_close(to_host<float>(rd, rows), rstd, 0, 2e-6, what + " rstd");
    vk().rmsnorm_forward(xd.as<const float>(), gd.as<const float>(), yd.as<float>(), nullptr, rows, n,
                         1e-5f);  // no rstd
    expect_close(to_host<float>(yd, rows * n), y, 1e-6, 2e-6, what + " without rstd");
  }
}

// RoPE in both styles, for whole sequences (B x T from pos0) and for rows at listed positions,
// forward against the reference, inverse against the reference's backward.
TEST_F(VulkanTest, RopeMatchesReference) {
  const double theta = 10000.0;
  const int64_t max_T = 300;
  Rng rng(22);
  for (kernels::RopeStyle style : {kernels::RopeStyle::interleaved, kernels::RopeStyle::half})
    for (int64_t d : {2, 6, 64}) {
      std::vector<float> table(kernels::rope_table_floats(max_T, d));
      backends::cpu::kernels().rope_table_build(table.data(), max_T, d, theta, kernels::RopeScaling{});
      const DeviceBuffer td = to_device(table);
      const backends::DeviceRope rope{max_T, d, td.as<const float>(), td.as<const float>() + max_T * d / 2};
      const int64_t B = 2, T = 9, heads = 3, pos0 = 290;
      const auto x = testing::random_vector(B * T * heads * d, rng);
      for (bool inverse : {false, true}) {
        auto want = widen(x);
        if (inverse) reference::rope_backward(style, want.data(), B, T, heads, d, pos0, theta);
        else reference::rope_forward(style, want.data(), B, T, heads, d, pos0, theta);
        const DeviceBuffer xd = to_device(x);
        vk().rope(rope, style, xd.as<float>(), heads, {B, T, pos0, nullptr}, inverse);
        expect_close(to_host<float>(xd, B * T * heads * d), want, 2e-6, 2e-6,
                     "rope sequences d=" + std::to_string(d) + (inverse ? " inverse" : ""));
      }
      const std::vector<int64_t> positions = {0, 299, 7, 7, 150};
      const int64_t rows = static_cast<int64_t>(positions.size());
      const auto y = testing::random_vector(rows * heads * d, rng);
      auto want = widen(y);
      for (int64_t i = 0; i < rows; ++i)
        reference::rope_forward(style, want.data() + i * heads * d, 1, 1, heads, d, positions[i], theta);
      const DeviceBuffer yd = to_device(y), pd = to_device(positions);
      vk().rope(rope, style, yd.as<float>(), heads, {1, rows, 0, pd.as<const int64_t>()}, false);
      expect_close(to_host<float>(yd, rows * heads * d), want, 2e-6, 2e-6,
                   "rope listed positions d=" + std::to_string(d));
    }
}

// llama3-scaled frequencies come from the table: the device applies it as the CPU kernel does.
TEST_F(VulkanTest, RopeReadsScaledTables) {
  const int64_t max_T = 64, d = 16, heads = 2, T = 40;
  kernels::RopeScaling scaling;
  scaling.type = kernels::RopeScalingType::llama3;
  scaling.factor = 8;
  scaling.original_max_position = 32;
  std::vector<float> table(kernels::rope_table_floats(max_T, d));
  const kernels::RopeTable host = backends::cpu::kernels().rope_table_build(table.data(), max_T, d, 500000.0, scaling);
  Rng rng(23);
  const auto x = testing::random_vector(T * heads * d, rng);
  auto want = x;
  backends::cpu::kernels().rope_forward(host, kernels::RopeStyle::half, want.data(), 1, T, heads, 3);
  const DeviceBuffer td = to_device(table), xd = to_device(x);
  vk().rope({max_T, d, td.as<const float>(), td.as<const float>() + max_T * d / 2}, kernels::RopeStyle::half,
            xd.as<float>(), heads, {1, T, 3, nullptr}, false);
  expect_close(to_host<float>(xd, T * heads * d), widen(want), 1e-6, 1e-6, "rope llama3");
}

TEST_F(VulkanTest, ElementwiseOpsMatchReference) {
  Rng rng(24);
  for (int64_t n : {1, 255, 257, 100000}) {
    const auto g = testing::random_vector(n, rng, -8, 8), u = testing::random_vector(n, rng);
    std::vector<double> h(n);
    reference::swiglu_forward(widen(g).data(), widen(u).data(), h.data(), n);
    const DeviceBuffer gd = to_device(g), ud = to_device(u), hd = vk().allocate(n * 4);
    vk().swiglu_forward(gd.as<const float>(), ud.as<const float>(), hd.as<float>(), n);
    expect_close(to_host<float>(hd, n), h, 1e-6, 2e-6, "swiglu n=" + std::to_string(n));
    // y += x, then y = s x, exactly.
    const auto before = to_host<float>(hd, n);
    vk().add(hd.as<float>(), gd.as<const float>(), n);
    const auto added = to_host<float>(hd, n);
    vk().scale(hd.as<float>(), ud.as<const float>(), -0.375f, n);
    const auto scaled = to_host<float>(hd, n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(added[i], before[i] + g[i]) << i;
      ASSERT_EQ(scaled[i], -0.375f * u[i]) << i;
    }
  }
}

TEST_F(VulkanTest, AddIsExact) {
  Rng rng(25);
  const int64_t n = 1001;
  const auto y = testing::random_vector(n, rng), x = testing::random_vector(n, rng);
  const DeviceBuffer yd = to_device(y), xd = to_device(x);
  vk().add(yd.as<float>() + 1, xd.as<const float>() + 2, n - 3);  // offsets within the allocations
  const auto got = to_host<float>(yd, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], i >= 1 && i < n - 2 ? y[i] + x[i + 1] : y[i]) << i;
}

TEST_F(VulkanTest, PolyNormMatchesReference) {
  Rng rng(26);
  for (auto [rows, F] : {std::pair<int64_t, int64_t>{1, 1}, {3, 130}, {4, 1000}}) {
    const auto g = testing::random_vector(rows * F, rng, -2, 2), u = testing::random_vector(rows * F, rng);
    const std::vector<float> w = {0.5f, -0.25f, 1.5f}, b = {0.125f};
    std::vector<double> h(rows * F);
    reference::polynorm_glu_forward(widen(g).data(), widen(u).data(), widen(w).data(), widen(b).data(), h.data(), rows,
                                    F);
    const DeviceBuffer gd = to_device(g), ud = to_device(u), wd = to_device(w), bd = to_device(b);
    const DeviceBuffer hd = vk().allocate(rows * F * 4);
    vk().polynorm_glu_forward(gd.as<const float>(), ud.as<const float>(), wd.as<const float>(), bd.as<const float>(),
                              hd.as<float>(), rows, F);
    expect_close(to_host<float>(hd, rows * F), h, 2e-6, 1e-5,
                 "polynorm " + std::to_string(rows) + " x " + std::to_string(F));
  }
}

TEST_F(VulkanTest, GatherRowsCopiesRows) {
  Rng rng(27);
  const int64_t width = 37, src_rows = 9;
  const auto src = testing::random_vector(src_rows * width, rng);
  const std::vector<int32_t> rows = {8, 0, 3, 3, 7};
  const DeviceBuffer sd = to_device(src), rd = to_device(rows), dd = vk().allocate(5 * width * 4);
  vk().gather_rows(sd.as<const float>(), rd.as<const int32_t>(), 5, width, dd.as<float>());
  const auto got = to_host<float>(dd, 5 * width);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t k = 0; k < width; ++k) ASSERT_EQ(got[i * width + k], src[rows[i] * width + k]) << i << " " << k;
}

TEST_F(VulkanTest, DiffLambdaMatchesItsFormulaInDouble) {
  Rng rng(28);
  for (int64_t d : {1, 64, 200}) {
    const auto q1 = testing::random_vector(d, rng, -0.3, 0.3), k1 = testing::random_vector(d, rng, -0.3, 0.3);
    const auto q2 = testing::random_vector(d, rng, -0.3, 0.3), k2 = testing::random_vector(d, rng, -0.3, 0.3);
    double a = 0, b = 0;
    for (int64_t i = 0; i < d; ++i) {
      a += static_cast<double>(q1[i]) * k1[i];
      b += static_cast<double>(q2[i]) * k2[i];
    }
    const double lambda_init = 0.8 - 0.6 * std::exp(-0.3 * 3);
    const double want = std::exp(a) - std::exp(b) + lambda_init;
    const DeviceBuffer q1d = to_device(q1), k1d = to_device(k1), q2d = to_device(q2), k2d = to_device(k2);
    const DeviceBuffer out = vk().allocate(4);
    vk().diff_lambda(q1d.as<const float>(), k1d.as<const float>(), q2d.as<const float>(), k2d.as<const float>(), d,
                     lambda_init, out.as<float>());
    EXPECT_NEAR(to_host<float>(out, 1)[0], want, 1e-6 * (1 + std::fabs(want))) << "d=" << d;
  }
}

TEST_F(VulkanTest, TrainingOpsNameThemselvesAndTheDevice) {
  const DeviceBuffer a = vk().allocate(64);
  const auto p = a.as<float>();
  const std::string device = vk().info().name;
  const std::pair<const char*, std::function<void()>> ops[] = {
      {"gemm", [&] { vk().gemm(kernels::Trans::N, kernels::Trans::N, 1, 1, 1, 1, p, p, 0, p); }},
      {"rmsnorm_backward", [&] { vk().rmsnorm_backward(p, p, p, p, p, p, 1, 1); }},
      {"swiglu_backward", [&] { vk().swiglu_backward(p, p, p, p, p, 1); }},
      {"attention_backward", [&] { vk().attention_backward({}, p, p, p, p, p, {}, p, p, p, p, p); }},
      {"cross_entropy_forward_backward",
       [&] { vk().cross_entropy_forward_backward(p, a.as<const int32_t>(), p, 1, 1, -1, nullptr); }},
      {"adamw_update", [&] { vk().adamw_update(p, p, p, p, 1, {}, 1); }},
      {"sum_of_squares", [&] { vk().sum_of_squares(p, 1); }},
  };
  for (const auto& [name, op] : ops) {
    const std::string error = testing::error_of(op);
    EXPECT_NE(error.find(name), std::string::npos) << error;
    EXPECT_NE(error.find(device), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace difftx
