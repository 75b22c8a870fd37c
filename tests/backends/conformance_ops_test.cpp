// The conformance suite, row-wise and element-wise ops: every backend's op against the
// double-precision reference twin (tests/reference) on awkward shapes (one row, widths that are
// no multiple of a vector or a tile), on every CPU level this machine runs and every other device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "kernels/polynorm.h"
#include "reference/ops_reference.h"
#include "reference/polynorm_reference.h"
#include "support/backend_case.h"
#include "support/testing.h"

namespace difftx::testing {
namespace {

class ConformanceOps : public Conformance {};

struct RowShape {
  int64_t rows, n;
};
// Around the Vulkan norms' blocks (shaders/norm_block.glsl: 256, 2048 and 4096 floats, wider rows
// in several): widths below a block's threads and no multiple of them, each block's width and one
// past it, two blocks, the last partial; and many rows.
const RowShape kRowShapes[] = {{1, 1},    {1, 7},    {3, 64},   {5, 129},  {2, 256},  {3, 257},
                               {17, 2048}, {2, 2049}, {2, 4096}, {3, 5000}, {1, 8192}, {300, 96}};

TEST_P(ConformanceOps, RmsNormForwardAndBackward) {
  Rng rng(1);
  for (const RowShape& s : kRowShapes) {
    const auto x = random_vector(s.rows * s.n, rng, -2, 2), g = random_vector(s.n, rng, 0.5, 1.5);
    const auto dy = random_vector(s.rows * s.n, rng);
    const auto dg0 = random_vector(s.n, rng);  // the gain's gradient accumulates
    auto dx = zeros<float>(s.rows * s.n), y = zeros<float>(s.rows * s.n), rstd = zeros<float>(s.rows);
    auto dg = on_device(dg0);
    const auto dx_in = on_device(x), dg_in = on_device(g), ddy = on_device(dy);
    backend().rmsnorm_forward(dx_in, dg_in, y, rstd, s.rows, s.n, 1e-5f);
    if (backend().trains()) backend().rmsnorm_backward(dx_in, dg_in, rstd, ddy, dx, dg, s.rows, s.n);
    std::vector<double> yr(x.size()), rr(s.rows), dxr(x.size()), dgr(dg0.begin(), dg0.end());
    const auto xd = to_double(x), gd = to_double(g), dyd = to_double(dy);
    reference::rmsnorm_forward(xd.data(), gd.data(), yr.data(), rr.data(), s.rows, s.n, 1e-5);
    reference::rmsnorm_backward(xd.data(), gd.data(), rr.data(), dyd.data(), dxr.data(), dgr.data(), s.rows, s.n);
    const std::string what = "rows=" + std::to_string(s.rows) + " n=" + std::to_string(s.n);
    expect_near(y.read(), yr, 1e-5, 1e-5, "y " + what);
    expect_near(rstd.read(), rr, 1e-6, 1e-5, "rstd " + what);
    if (!backend().trains()) continue;
    expect_near(dx.read(), dxr, 1e-5, 1e-4, "dx " + what);
    expect_near(dg.read(), dgr, 1e-4, 1e-4, "dg " + what);
  }
}

TEST_P(ConformanceOps, RopeBothStylesAtPositionsAndInverse) {
  constexpr double kTheta = 10000.0;
  Rng rng(2);
  for (kernels::RopeStyle style : {kernels::RopeStyle::interleaved, kernels::RopeStyle::half})
    for (int64_t d : {2, 32, 66, 128})
      for (int64_t heads : {1, 3}) {
        const int64_t T = 5, pos0 = 11, max_T = 64;
        const backends::RopeTableBuffer table = backends::make_rope_table(backend(), max_T, d, kTheta, {});
        const auto x = random_vector(T * heads * d, rng);
        const std::string what = std::string(style == kernels::RopeStyle::half ? "half" : "interleaved") +
                                 " d=" + std::to_string(d) + " heads=" + std::to_string(heads);
        // Consecutive positions pos0 + t, then the same rows at explicit positions.
        auto rotated = on_device(x);
        backend().rope(table.table, style, rotated, heads, {1, T, pos0, nullptr}, false);
        std::vector<double> want = to_double(x);
        reference::rope_forward(style, want.data(), 1, T, heads, d, pos0, kTheta);
        expect_near(rotated.read(), want, 2e-5, 1e-5, "forward " + what);
        std::vector<int64_t> positions(T);
        std::iota(positions.begin(), positions.end(), pos0);
        const auto at = on_device(positions);
        auto each = on_device(x);
        backend().rope(table.table, style, each, heads, {1, T, 0, at}, false);
        EXPECT_EQ(each.read(), rotated.read()) << "per-row positions " << what;
        backend().rope(table.table, style, rotated, heads, {1, T, pos0, nullptr}, true);  // back
        expect_near(rotated.read(), to_double(x), 2e-5, 1e-5, "inverse " + what);
      }
}

// A listed position outside the table (its length, -1, 2^32 + 3 which a 32-bit read wraps into it, -2^32 + 3) is an
// error naming it where the positions are on the host (the CPU); a device writes that row as NaN, the others as alone.
TEST_P(ConformanceOps, RopeListedPositionOutsideTheTable) {
  const int64_t d = 8, heads = 2, max_T = 64, width = heads * d;
  Rng rng(12);
  const backends::RopeTableBuffer table = backends::make_rope_table(backend(), max_T, d, 10000.0, {});
  const auto x = random_vector(2 * width, rng);
  auto alone = on_device(std::vector<float>(x.begin(), x.begin() + width));
  backend().rope(table.table, kernels::RopeStyle::half, alone, heads, {1, 1, 0, on_device(std::vector<int64_t>{3})},
                 false);
  for (int64_t position : {max_T, int64_t{-1}, (int64_t{1} << 32) + 3, -(int64_t{1} << 32) + 3}) {
    auto rows = on_device(x);
    const auto at = on_device(std::vector<int64_t>{3, position});
    const std::string error =
        error_of([&] { backend().rope(table.table, kernels::RopeStyle::half, rows, heads, {1, 2, 0, at}, false); });
    if (backend().host_memory()) {
      EXPECT_NE(error.find(std::to_string(position)), std::string::npos) << error;
      continue;
    }
    EXPECT_EQ(error, "(no error)") << position;
    const std::vector<float> got = rows.read(), want = alone.read();
    EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin())) << position;
    EXPECT_TRUE(std::all_of(got.begin() + width, got.end(), [](float v) { return std::isnan(v); })) << position;
  }
}

TEST_P(ConformanceOps, SwigluForwardAndBackward) {
  Rng rng(3);
  for (int64_t n : {1, 15, 1000}) {
    const auto g = random_vector(n, rng, -6, 6), u = random_vector(n, rng), dh = random_vector(n, rng);
    auto h = zeros<float>(n), dg = zeros<float>(n), du = zeros<float>(n);
    const auto gd = on_device(g), ud = on_device(u), dhd = on_device(dh);
    backend().swiglu_forward(gd, ud, h, n);
    if (backend().trains()) backend().swiglu_backward(gd, ud, dhd, dg, du, n);
    std::vector<double> hr(n), dgr(n), dur(n);
    const auto g64 = to_double(g), u64 = to_double(u), dh64 = to_double(dh);
    reference::swiglu_forward(g64.data(), u64.data(), hr.data(), n);
    reference::swiglu_backward(g64.data(), u64.data(), dh64.data(), dgr.data(), dur.data(), n);
    expect_near(h.read(), hr, 1e-6, 1e-5, "h n=" + std::to_string(n));
    if (!backend().trains()) continue;
    expect_near(dg.read(), dgr, 1e-6, 1e-5, "dg n=" + std::to_string(n));
    expect_near(du.read(), dur, 1e-6, 1e-5, "du n=" + std::to_string(n));
  }
}

TEST_P(ConformanceOps, PolyNormGluForwardAndBackward) {
  Rng rng(4);
  for (const RowShape& s : kRowShapes) {
    const int64_t n = s.rows * s.n;
    const auto g = random_vector(n, rng), u = random_vector(n, rng), dh = random_vector(n, rng);
    const auto w = random_vector(3, rng, 0.2, 0.5), b = random_vector(1, rng);
    auto h = zeros<float>(n), dg = zeros<float>(n), du = zeros<float>(n);
    auto dw = on_device(std::vector<float>(3, 0.25f)), db = on_device(std::vector<float>(1, 0.5f));
    const auto gd = on_device(g), ud = on_device(u), dhd = on_device(dh), wd = on_device(w), bd = on_device(b);
    backend().polynorm_glu_forward(gd, ud, wd, bd, h, s.rows, s.n);
    if (backend().trains()) backend().polynorm_glu_backward(gd, ud, wd, bd, dhd, dg, du, dw, db, s.rows, s.n);
    std::vector<double> hr(n), dgr(n), dur(n), dwr(3, 0.25), dbr(1, 0.5);
    const auto g64 = to_double(g), u64 = to_double(u), dh64 = to_double(dh), w64 = to_double(w), b64 = to_double(b);
    reference::polynorm_glu_forward(g64.data(), u64.data(), w64.data(), b64.data(), hr.data(), s.rows, s.n);
    reference::polynorm_glu_backward(g64.data(), u64.data(), w64.data(), b64.data(), dh64.data(), dgr.data(),
                                     dur.data(), dwr.data(), dbr.data(), s.rows, s.n);
    const std::string what = " rows=" + std::to_string(s.rows) + " F=" + std::to_string(s.n);
    expect_near(h.read(), hr, 1e-5, 1e-4, "h" + what);
    if (!backend().trains()) continue;
    expect_near(dg.read(), dgr, 1e-4, 1e-4, "dg" + what);
    expect_near(du.read(), dur, 1e-5, 1e-4, "du" + what);
    expect_near(dw.read(), dwr, 1e-4, 1e-4, "dw" + what);
    expect_near(db.read(), dbr, 1e-4, 1e-4, "db" + what);
  }
}

// A row's bits are the ones it has alone, whatever the rows dispatched with it and wherever its
// bytes lie (the engine's batch invariance): each norm over 5 rows, then each row from buffers of
// its own, then rows 1-3 from inside the batch's buffers.
TEST_P(ConformanceOps, NormRowsHaveTheirOwnBits) {
  using Ptr = backends::DevicePtr<const float>;
  Rng rng(9);
  const int64_t rows = 5;
  for (int64_t n : {7, 128, 256, 1000, 2048, 3000, 5000}) {
    const auto gain = on_device(random_vector(n, rng, 0.5, 1.5)), bias = on_device(random_vector(n, rng, -0.5, 0.5));
    const auto weights = on_device(random_vector(3, rng, 0.2, 0.5));
    // Row i's outputs of count rows whose x (and u) start at the addresses given: its y, then its
    // entry of each statistic.
    const auto by_row = [n](int64_t count, const std::vector<float>& y, const std::vector<std::vector<float>>& stats) {
      std::vector<std::vector<float>> out(count);
      for (int64_t i = 0; i < count; ++i) {
        out[i].assign(y.begin() + i * n, y.begin() + (i + 1) * n);
        for (const auto& stat : stats) out[i].push_back(stat[i]);
      }
      return out;
    };
    using Norm = std::function<std::vector<std::vector<float>>(Ptr, Ptr, int64_t)>;
    std::vector<std::pair<const char*, Norm>> norms = {
        {"rmsnorm",
         [&](Ptr x, Ptr, int64_t count) {
           auto y = zeros<float>(count * n), rstd = zeros<float>(count);
           backend().rmsnorm_forward(x, gain, y, rstd, count, n, 1e-5f);
           return by_row(count, y.read(), {rstd.read()});
         }},
        {"polynorm", [&](Ptr x, Ptr u, int64_t count) {
           auto h = zeros<float>(count * n);
           backend().polynorm_glu_forward(x, u, weights, bias, h, count, n);
           return by_row(count, h.read(), {});
         }}};
    if (backend().runs_hybrid())
      norms.push_back({"layernorm", [&](Ptr x, Ptr, int64_t count) {
                         auto y = zeros<float>(count * n), mean = zeros<float>(count), rstd = zeros<float>(count);
                         backend().layernorm_forward(x, gain, bias, y, mean, rstd, count, n, 1e-5f);
                         return by_row(count, y.read(), {mean.read(), rstd.read()});
                       }});
    const auto x = random_vector(rows * n, rng, -2, 2), u = random_vector(rows * n, rng);
    const auto xd = on_device(x), ud = on_device(u);
    for (const auto& [name, norm] : norms) {
      const std::string what = std::string(name) + " n=" + std::to_string(n);
      const auto batch = norm(xd, ud, rows);
      for (int64_t i = 0; i < rows; ++i) {
        const auto row = [&](const std::vector<float>& v) {
          return on_device(std::vector<float>(v.begin() + i * n, v.begin() + (i + 1) * n));
        };
        EXPECT_EQ(norm(row(x), row(u), 1)[0], batch[i]) << what << " row " << i << " alone";
      }
      const auto window = norm(Ptr(xd) + n, Ptr(ud) + n, 3);
      for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(window[i], batch[i + 1]) << what << " row " << i + 1 << " of 3";
    }
  }
}

TEST_P(ConformanceOps, AddScaleGatherAndZero) {
  Rng rng(5);
  const int64_t rows = 7, width = 33;
  const auto x = random_vector(rows * width, rng), y0 = random_vector(rows * width, rng);
  auto y = on_device(y0);
  const auto xd = on_device(x);
  backend().add(y, xd, rows * width);
  std::vector<float> sum(y0.size()), scaled(y0.size());
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = y0[i] + x[i], scaled[i] = -0.75f * x[i];
  EXPECT_EQ(y.read(), sum);
  backend().scale(y, xd, -0.75f, rows * width);
  EXPECT_EQ(y.read(), scaled);
  const std::vector<int32_t> pick = {6, 0, 3, 3};
  auto gathered = zeros<float>(4 * width);
  backend().gather_rows(xd, on_device(pick), 4, width, gathered);
  std::vector<float> want;
  for (int32_t r : pick) want.insert(want.end(), x.begin() + r * width, x.begin() + (r + 1) * width);
  EXPECT_EQ(gathered.read(), want);
  backend().zero(y.ptr() + width, sizeof(float) * width);  // row 1 only
  const auto after = y.read();
  for (int64_t i = 0; i < rows * width; ++i)
    EXPECT_EQ(after[i], i / width == 1 ? 0.0f : scaled[i]) << "element " << i;
}

TEST_P(ConformanceOps, DiffLambdaAndItsGradient) {
  Rng rng(6);
  const int64_t d = 24;
  const auto q1 = random_vector(d, rng, -0.3, 0.3), k1 = random_vector(d, rng, -0.3, 0.3);
  const auto q2 = random_vector(d, rng, -0.3, 0.3), k2 = random_vector(d, rng, -0.3, 0.3);
  const auto dq1 = on_device(q1), dk1 = on_device(k1), dq2 = on_device(q2), dk2 = on_device(k2);
  auto out = zeros<float>(1);
  backend().diff_lambda(dq1, dk1, dq2, dk2, d, 0.35, out);
  double e1 = 0, e2 = 0;
  for (int64_t i = 0; i < d; ++i) e1 += double(q1[i]) * k1[i], e2 += double(q2[i]) * k2[i];
  EXPECT_NEAR(out.read()[0], std::exp(e1) - std::exp(e2) + 0.35, 1e-6);
  if (!backend().trains()) return;
  const std::vector<float> dl = {0.5f};
  auto g1 = zeros<float>(d), h1 = zeros<float>(d), g2 = zeros<float>(d), h2 = zeros<float>(d);
  backend().diff_lambda_backward(dq1, dk1, dq2, dk2, d, on_device(dl), g1, h1, g2, h2);
  const auto gq1 = g1.read(), gk2 = h2.read();
  for (int64_t i = 0; i < d; ++i) {
    EXPECT_NEAR(gq1[i], 0.5 * std::exp(e1) * k1[i], 1e-6) << i;
    EXPECT_NEAR(gk2[i], -0.5 * std::exp(e2) * q2[i], 1e-6) << i;
  }
}

TEST_P(ConformanceOps, CrossEntropyAdamWAndSumOfSquares) {
  if (!backend().trains()) GTEST_SKIP() << GetParam().name << " does not train";
  Rng rng(7);
  const int64_t rows = 5, V = 131;
  const auto logits = random_vector(rows * V, rng, -4, 4);
  const std::vector<int32_t> targets = {3, -1, 130, 0, 77};
  auto dlogits = zeros<float>(rows * V);
  int64_t count = 0, count_sum = 0;
  const auto dl = on_device(logits);
  const auto dt = on_device(targets);
  const double mean = backend().cross_entropy_forward_backward(dl, dt, dlogits, rows, V, -1, &count);
  const double sum = backend().cross_entropy_sum(dl, dt, rows, V, -1, &count_sum);
  std::vector<double> dref(rows * V);
  int64_t count_ref = 0;
  const auto l64 = to_double(logits);
  const double mean_ref =
      reference::cross_entropy_forward_backward(l64.data(), targets.data(), dref.data(), rows, V, -1, &count_ref);
  EXPECT_EQ(count, count_ref);
  EXPECT_EQ(count_sum, count_ref);
  EXPECT_NEAR(mean, mean_ref, 1e-5);
  EXPECT_NEAR(sum, mean_ref * count_ref, 1e-4);
  expect_near(dlogits.read(), dref, 1e-7, 1e-4, "dlogits");

  const int64_t n = 1001;
  const auto p = random_vector(n, rng), g = random_vector(n, rng), m = random_vector(n, rng, -0.1, 0.1);
  const auto v = random_vector(n, rng, 0, 0.01);
  auto dp = on_device(p), dm = on_device(m), dv = on_device(v);
  const kernels::AdamWParams hp{1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 3};
  backend().adamw_update(dp, on_device(g), dm, dv, n, hp, 0.5f);
  std::vector<double> pr = to_double(p), mr = to_double(m), vr = to_double(v);
  const auto g64 = to_double(g);
  reference::adamw_update(pr.data(), g64.data(), mr.data(), vr.data(), n, hp, 0.5);
  expect_near(dp.read(), pr, 1e-6, 1e-5, "p");
  expect_near(dm.read(), mr, 1e-7, 1e-5, "m");
  expect_near(dv.read(), vr, 1e-9, 1e-5, "v");
  EXPECT_NEAR(backend().sum_of_squares(on_device(g), n), reference::sum_of_squares(g64.data(), n), 1e-9 * n);
}

TEST_P(ConformanceOps, EmbeddingBackwardAccumulatesRowsInOrder) {
  if (!backend().trains()) GTEST_SKIP() << GetParam().name << " does not train";
  Rng rng(8);
  const int64_t rows = 9, n = 19, V = 6;
  const std::vector<int32_t> ids = {2, 5, 2, 0, 2, 1, 5, 3, 4};
  const auto dy = random_vector(rows * n, rng), table0 = random_vector(V * n, rng);
  auto table = on_device(table0);
  backend().embedding_backward(on_device(ids), on_device(dy), table, rows, n);
  std::vector<double> want = to_double(table0);
  const auto dy64 = to_double(dy);
  reference::embedding_backward(ids.data(), dy64.data(), want.data(), rows, n);
  expect_near(table.read(), want, 1e-6, 1e-6, "dtable");
}

INSTANTIATE_TEST_SUITE_P(Backends, ConformanceOps, ::testing::ValuesIn(backends_under_test()), backend_test_name);

}  // namespace
}  // namespace difftx::testing
