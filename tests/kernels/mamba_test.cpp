// Mamba-1's conv and selective scan (kernels/mamba.h): the prompt kernels against their double
// twins on awkward shapes (one channel, a 1-tap conv, one state entry, strided inputs, a state
// carried in, threaded and not); a prompt cut anywhere, or continued step by step, gives the bits
// of the whole prompt; a decode batch's rows are independent; the conv and the scan against
// values worked out by hand; bad dims are errors naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/rng.h"
#include "kernels/ops/ops_test_support.h"
#include "reference/mamba_reference.h"
#include "support/level_kernels.h"

namespace difftx::kernels {
namespace {

using testing::expect_close;
using testing::random_vector;
using testing::to_double;

// One layer's inputs for T tokens of one sequence: x rows [x | z] (ld 2E), x_proj rows
// [dt_in (R) | B | C] (ld R + 2S), and the window and state carried in.
struct ScanCase {
  MambaDims dims{};
  int64_t T = 0, R = 3;
  std::vector<float> x, w, bias, dt_in, dt_bias, a_log, bc, D, window, state;

  static ScanCase random(const MambaDims& dims, int64_t T, uint64_t seed) {
    Rng rng(seed);
    const int64_t E = dims.channels, S = dims.state, K = dims.conv;
    ScanCase c;
    c.dims = dims;
    c.T = T;
    c.x = random_vector(T * 2 * E, rng, -2, 2);
    c.w = random_vector(E * K, rng, -0.5, 0.5);
    c.bias = random_vector(E, rng, -0.2, 0.2);
    c.dt_in = random_vector(T * E, rng, -3, 1);  // dt = softplus(dt_in + dt_bias) in about [0.02, 1.3]
    c.dt_bias = random_vector(E, rng, -1, 0);
    c.a_log = random_vector(E * S, rng, -1, 2.5);
    c.bc = random_vector(T * c.ld_bc(), rng);
    c.D = random_vector(E, rng, 0.5, 1.5);
    c.window = random_vector((K - 1) * E, rng, -2, 2);  // a sequence that has seen tokens before
    c.state = random_vector(E * S, rng, -1, 1);
    return c;
  }
  int64_t ld_x() const { return 2 * dims.channels; }
  int64_t ld_bc() const { return R + 2 * dims.state; }
  const float* B(int64_t t = 0) const { return bc.data() + t * ld_bc() + R; }
  const float* C(int64_t t = 0) const { return bc.data() + t * ld_bc() + R + dims.state; }
};

// u and y of the case's tokens [t0, t1) as a prompt, advancing window and state.
void run_prompt(const ScanCase& c, int64_t t0, int64_t t1, std::vector<float>& window, std::vector<float>& state,
                float* u, float* y) {
  const int64_t E = c.dims.channels, T = t1 - t0;
  cpu().mamba_conv_prompt(c.dims, T, c.x.data() + t0 * c.ld_x(), c.ld_x(), c.w.data(), c.bias.data(), window.data(), u);
  cpu().mamba_scan_prompt(c.dims, T, u, c.dt_in.data() + t0 * E, c.dt_bias.data(), c.a_log.data(), c.B(t0), c.C(t0),
                          c.ld_bc(), c.D.data(), state.data(), y);
}

TEST(Mamba, PromptMatchesReferenceOnAwkwardShapes) {
  int cases = 0;
  for (const auto& [E, S, K, T] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {1, 1, 1, 1}, {1, 16, 4, 9}, {7, 3, 2, 5}, {65, 16, 4, 1}, {65, 5, 3, 40}, {300, 16, 4, 40}, {33, 2, 6, 3}}) {
    const ScanCase c = ScanCase::random({E, S, K}, T, 70 + cases++);
    std::vector<float> window = c.window, state = c.state, u(T * E), y(T * E);
    run_prompt(c, 0, T, window, state, u.data(), y.data());

    auto window_ref = to_double(c.window), state_ref = to_double(c.state);
    std::vector<double> u_ref(T * E), y_ref(T * E);
    const auto x = to_double(c.x), bc = to_double(c.bc);
    reference::mamba_conv_prompt(c.dims, T, x.data(), c.ld_x(), to_double(c.w).data(), to_double(c.bias).data(),
                                 window_ref.data(), u_ref.data());
    reference::mamba_scan_prompt(c.dims, T, u_ref.data(), to_double(c.dt_in).data(), to_double(c.dt_bias).data(),
                                 to_double(c.a_log).data(), bc.data() + c.R, bc.data() + c.R + S, c.ld_bc(),
                                 to_double(c.D).data(), state_ref.data(), y_ref.data());
    const std::string where =
        "E=" + std::to_string(E) + " S=" + std::to_string(S) + " K=" + std::to_string(K) + " T=" + std::to_string(T);
    expect_close(u, u_ref, 1e-6, 1e-5, "u " + where);
    expect_close(y, y_ref, 1e-5, 1e-4, "y " + where);
    expect_close(window, window_ref, 0, 0, "window " + where);  // copies of inputs: exact
    expect_close(state, state_ref, 1e-5, 1e-4, "state " + where);
  }
}

TEST(Mamba, APromptCutAnywhereOrContinuedStepByStepGivesTheSameBits) {
  const int64_t E = 70, S = 16, K = 4, T = 11;
  const ScanCase c = ScanCase::random({E, S, K}, T, 81);
  std::vector<float> window = c.window, state = c.state, u(T * E), y(T * E);
  run_prompt(c, 0, T, window, state, u.data(), y.data());
  for (int64_t cut : {1, 2, 3, 5, 10}) {  // cuts shorter and longer than the K - 1 window
    std::vector<float> w2 = c.window, s2 = c.state, u2(T * E), y2(T * E);
    run_prompt(c, 0, cut, w2, s2, u2.data(), y2.data());
    run_prompt(c, cut, T, w2, s2, u2.data() + cut * E, y2.data() + cut * E);
    EXPECT_EQ(u2, u) << "cut " << cut;
    EXPECT_EQ(y2, y) << "cut " << cut;
    EXPECT_EQ(w2, window) << "cut " << cut;
    EXPECT_EQ(s2, state) << "cut " << cut;
  }
  std::vector<float> w3 = c.window, s3 = c.state, u3(T * E), y3(T * E);
  float* windows[] = {w3.data()};
  float* states[] = {s3.data()};
  for (int64_t t = 0; t < T; ++t) {
    cpu().mamba_conv_step(c.dims, 1, c.x.data() + t * c.ld_x(), c.ld_x(), c.w.data(), c.bias.data(), windows,
                          u3.data() + t * E);
    cpu().mamba_scan_step(c.dims, 1, u3.data() + t * E, c.dt_in.data() + t * E, c.dt_bias.data(), c.a_log.data(),
                          c.B(t), c.C(t), c.ld_bc(), c.D.data(), states, y3.data() + t * E);
  }
  EXPECT_EQ(u3, u);
  EXPECT_EQ(y3, y);
  EXPECT_EQ(w3, window);
  EXPECT_EQ(s3, state);
}

TEST(Mamba, StepRowsAreIndependentSequences) {
  const int64_t E = 1100, S = 16, K = 4, rows = 3;  // rows * E * S runs threaded
  std::vector<ScanCase> seqs;
  for (int64_t r = 0; r < rows; ++r) seqs.push_back(ScanCase::random({E, S, K}, 1, 90 + r));
  const ScanCase& c = seqs[0];  // the layer's weights; each row its own token, window and state
  std::vector<float> x, dt_in, bc;
  std::vector<std::vector<float>> windows, states;
  for (const ScanCase& s : seqs) {
    x.insert(x.end(), s.x.begin(), s.x.end());
    dt_in.insert(dt_in.end(), s.dt_in.begin(), s.dt_in.end());
    bc.insert(bc.end(), s.bc.begin(), s.bc.end());
    windows.push_back(s.window);
    states.push_back(s.state);
  }
  std::vector<float*> window_ptrs, state_ptrs;
  for (int64_t r = 0; r < rows; ++r) window_ptrs.push_back(windows[r].data()), state_ptrs.push_back(states[r].data());
  std::vector<float> u(rows * E), y(rows * E);
  cpu().mamba_conv_step(c.dims, rows, x.data(), c.ld_x(), c.w.data(), c.bias.data(), window_ptrs.data(), u.data());
  cpu().mamba_scan_step(c.dims, rows, u.data(), dt_in.data(), c.dt_bias.data(), c.a_log.data(), bc.data() + c.R,
                        bc.data() + c.R + S, c.ld_bc(), c.D.data(), state_ptrs.data(), y.data());
  for (int64_t r = 0; r < rows; ++r) {
    ScanCase alone = seqs[r];
    alone.w = c.w, alone.bias = c.bias, alone.dt_bias = c.dt_bias, alone.a_log = c.a_log, alone.D = c.D;
    std::vector<float> window = alone.window, state = alone.state, u1(E), y1(E);
    run_prompt(alone, 0, 1, window, state, u1.data(), y1.data());
    EXPECT_EQ(std::vector<float>(u.begin() + r * E, u.begin() + (r + 1) * E), u1) << "row " << r;
    EXPECT_EQ(std::vector<float>(y.begin() + r * E, y.begin() + (r + 1) * E), y1) << "row " << r;
    EXPECT_EQ(windows[r], window) << "row " << r;
    EXPECT_EQ(states[r], state) << "row " << r;
  }
}

double silu(double v) { return v / (1 + std::exp(-v)); }

TEST(Mamba, ConvAndScanByHand) {
  // conv, E = 2, K = 3, a fresh sequence: an impulse at t = 1 gives the taps in time order.
  const MambaDims conv{2, 1, 3};
  const std::vector<double> w = {0.5, -1.0, 2.0, 1.0, 3.0, -2.0}, bias = {0.25, -0.5};
  std::vector<double> x(5 * 2, 0.0), window(2 * 2, 0.0), u(5 * 2);
  x[1 * 2 + 0] = 1.0, x[1 * 2 + 1] = 10.0;
  reference::mamba_conv_prompt(conv, 5, x.data(), 2, w.data(), bias.data(), window.data(), u.data());
  const double pre[5][2] = {{0, 0}, {2, -20}, {-1, 30}, {0.5, 10}, {0, 0}};
  for (int t = 0; t < 5; ++t)
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(u[t * 2 + c], silu(pre[t][c] + bias[c]), 1e-15) << t << ", " << c;
  EXPECT_EQ(window, (std::vector<double>{0, 0, 0, 0}));  // the last two inputs
  std::vector<float> uf(10), wf(4, 0.0f);
  const std::vector<float> xf(x.begin(), x.end()), w_f(w.begin(), w.end()), bf(bias.begin(), bias.end());
  cpu().mamba_conv_prompt(conv, 5, xf.data(), 2, w_f.data(), bf.data(), wf.data(), uf.data());
  expect_close(uf, u, 1e-6, 1e-6, "float conv");

  // scan, E = S = 1, dt = softplus(0) = ln 2, A = -2: s_t = e^(-2 ln 2) s_{t-1} + ln2 B u_t.
  const MambaDims scan{1, 1, 1};
  const std::vector<double> us = {1.0, 0.0, 2.0}, dt_in = {0, 0, 0}, zero = {0.0}, a_log = {std::log(2.0)};
  const std::vector<double> B = {1.5, 1.5, 1.5}, C = {0.5, 0.5, 0.5}, D = {0.7};
  std::vector<double> state = {0.0}, y(3);
  reference::mamba_scan_prompt(scan, 3, us.data(), dt_in.data(), zero.data(), a_log.data(), B.data(), C.data(), 1,
                               D.data(), state.data(), y.data());
  const double dt = std::log(2.0), a = 0.25;
  double s = 0;
  for (int t = 0; t < 3; ++t) {
    s = a * s + dt * 1.5 * us[t];
    EXPECT_NEAR(y[t], 0.5 * s + 0.7 * us[t], 1e-15) << t;
  }
  EXPECT_NEAR(state[0], s, 1e-15);
}

TEST(Mamba, BadDimsAreClearErrors) {
  std::vector<float> buf(64, 0.0f);
  float* ptrs[] = {buf.data()};
  auto conv = [&](MambaDims dims, int64_t ld) {
    return testing::error_of(
        [&] { cpu().mamba_conv_prompt(dims, 1, buf.data(), ld, buf.data(), buf.data(), buf.data(), buf.data()); });
  };
  EXPECT_NE(conv({0, 1, 1}, 4).find("'channels'"), std::string::npos);
  EXPECT_NE(conv({2, 0, 1}, 4).find("'state'"), std::string::npos);
  EXPECT_NE(conv({2, 1, 0}, 4).find("'conv'"), std::string::npos);
  EXPECT_NE(conv({4, 1, 2}, 3).find("ld_x"), std::string::npos);
  const std::string scan = testing::error_of([&] {
    cpu().mamba_scan_step({2, 4, 2}, 1, buf.data(), buf.data(), buf.data(), buf.data(), buf.data(), buf.data(), 3,
                          buf.data(), ptrs, buf.data());
  });
  EXPECT_NE(scan.find("ld_bc"), std::string::npos) << scan;
}

}  // namespace
}  // namespace difftx::kernels
