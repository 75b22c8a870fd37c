// The conformance suite, a hybrid stack's ops (Phi-4-mini-flash's SambaY): LayerNorm with a bias,
// a projection's bias, Mamba-1's conv and selective scan (prompt against the double reference, the
// step form against the prompt's bits), the GMU for F32 and BF16 weights, and sliding-window
// attention through the fused forward and the paged KV cache, on every backend that runs them; a
// backend that does not refuses each op, a sliding window and a hybrid model's forward by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/decode_attention.h"
#include "model/formats/phi4flash_config.h"
#include "model/hybrid_decoder.h"
#include "reference/attention_reference.h"
#include "reference/bias_reference.h"
#include "reference/decode_attention_reference.h"
#include "reference/gmu_reference.h"
#include "reference/layernorm_reference.h"
#include "reference/mamba_reference.h"
#include "support/backend_case.h"
#include "support/quant_weights.h"
#include "support/testing.h"

namespace difftx::testing {

using kernels::AttentionKind;
using kernels::MambaDims;
using kernels::MatmulOrder;
using kernels::WeightType;

namespace {

class ConformanceHybrid : public Conformance {
 protected:
  void SetUp() override {
    if (!backend().runs_hybrid()) GTEST_SKIP() << GetParam().name << " does not run a hybrid stack's ops";
  }
};

TEST_P(ConformanceHybrid, LayerNormForwardAndBackward) {
  Rng rng(41);
  // n = 1: every normalised value is 0 (x - mean = 0); the others around the Vulkan norms' blocks
  // (shaders/norm_block.glsl: 256, 2048 and 4096 floats, wider rows in several).
  for (const auto& [rows, n] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {1, 7}, {3, 64}, {5, 129}, {2, 256}, {3, 257}, {17, 2048}, {2, 2049}, {3, 5000}, {1, 8192}}) {
    const auto x = random_vector(rows * n, rng, -3, 5), dy = random_vector(rows * n, rng);
    const auto w = random_vector(n, rng, 0.5, 1.5), b = random_vector(n, rng, -0.5, 0.5);
    const auto dw0 = random_vector(n, rng), db0 = random_vector(n, rng);  // parameter gradients accumulate
    auto y = zeros<float>(rows * n), mean = zeros<float>(rows), rstd = zeros<float>(rows);
    const auto dx_in = on_device(x), dw_in = on_device(w), db_in = on_device(b);
    backend().layernorm_forward(dx_in, dw_in, db_in, y, mean, rstd, rows, n, 1e-5f);
    std::vector<double> yr(x.size()), mr(rows), rr(rows), dxr(x.size()), dwr = to_double(dw0), dbr = to_double(db0);
    const auto xd = to_double(x), wd = to_double(w), bd = to_double(b), dyd = to_double(dy);
    reference::layernorm_forward(xd.data(), wd.data(), bd.data(), yr.data(), mr.data(), rr.data(), rows, n, 1e-5);
    const std::string what = "rows=" + std::to_string(rows) + " n=" + std::to_string(n);
    expect_near(y.read(), yr, 1e-5, 1e-5, "y " + what);
    expect_near(mean.read(), mr, 1e-6, 1e-5, "mean " + what);
    expect_near(rstd.read(), rr, 1e-6, 1e-5, "rstd " + what);
    if (!backend().trains()) continue;
    auto dx = zeros<float>(rows * n);
    auto dw = on_device(dw0), db = on_device(db0);
    backend().layernorm_backward(dx_in, dw_in, mean, rstd, on_device(dy), dx, dw, db, rows, n);
    reference::layernorm_backward(xd.data(), wd.data(), mr.data(), rr.data(), dyd.data(), dxr.data(), dwr.data(),
                                  dbr.data(), rows, n);
    expect_near(dx.read(), dxr, 1e-4, 1e-4, "dx " + what);
    expect_near(dw.read(), dwr, 1e-4, 1e-4, "dw (accumulated) " + what);
    expect_near(db.read(), dbr, 1e-4, 1e-4, "db (accumulated) " + what);
  }
}

TEST_P(ConformanceHybrid, AddBias) {
  Rng rng(42);
  for (const auto& [rows, cols] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 1}, {3, 7}, {17, 33}, {70, 1001}}) {
    const auto y0 = random_vector(rows * cols, rng), bias = random_vector(cols, rng);
    auto y = on_device(y0);
    backend().add_bias(y, on_device(bias), rows, cols);
    std::vector<double> want = to_double(y0);
    reference::add_bias(want.data(), to_double(bias).data(), rows, cols);
    expect_near(y.read(), want, 1e-7, 1e-7, "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols));
  }
}

// One sequence's Mamba inputs: x with a row stride past E (in_proj's x half), B and C as columns
// of one [T, ld_bc] array (x_proj's output), a window and a state that earlier tokens left.
struct MambaCase {
  MambaDims dims{};
  int64_t T = 0;
  std::vector<float> x, w, bias, dt_in, dt_bias, a_log, bc, D, window, state;
  int64_t ld_x() const { return dims.channels + 3; }
  int64_t ld_bc() const { return 2 * dims.state + 1; }

  static MambaCase random(const MambaDims& dims, int64_t T, Rng& rng) {
    const int64_t E = dims.channels, S = dims.state, K = dims.conv;
    MambaCase c;
    c.dims = dims;
    c.T = T;
    c.x = random_vector(T * c.ld_x(), rng, -2, 2);
    c.w = random_vector(E * K, rng, -0.5, 0.5);
    c.bias = random_vector(E, rng, -0.2, 0.2);
    c.dt_in = random_vector(T * E, rng, -4, 1);
    c.dt_bias = random_vector(E, rng, -1, 1);
    c.a_log = random_vector(E * S, rng, -1, 2);
    c.bc = random_vector(T * c.ld_bc(), rng);
    c.D = random_vector(E, rng);
    c.window = random_vector((K - 1) * E, rng);
    c.state = random_vector(E * S, rng);
    return c;
  }
};

std::string describe(const MambaDims& d, int64_t T) {
  return "E=" + std::to_string(d.channels) + " S=" + std::to_string(d.state) + " K=" + std::to_string(d.conv) +
         " T=" + std::to_string(T);
}

TEST_P(ConformanceHybrid, MambaPromptMatchesTheReference) {
  Rng rng(43);
  for (const auto& [E, S, K, T] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {1, 1, 1, 1}, {5, 3, 2, 7}, {67, 16, 4, 33}, {130, 17, 4, 5}, {64, 256, 3, 2}}) {
    const MambaDims dims{E, S, K};
    const MambaCase c = MambaCase::random(dims, T, rng);
    auto window = on_device(c.window), state = on_device(c.state);
    auto u = zeros<float>(T * E), y = zeros<float>(T * E);
    const auto bc = on_device(c.bc);
    backend().mamba_conv_prompt(dims, T, on_device(c.x), c.ld_x(), on_device(c.w), on_device(c.bias), window, u);
    backend().mamba_scan_prompt(dims, T, u, on_device(c.dt_in), on_device(c.dt_bias), on_device(c.a_log), bc,
                                bc.ptr() + S, c.ld_bc(), on_device(c.D), state, y);
    std::vector<double> wr = to_double(c.window), sr = to_double(c.state), ur(T * E), yr(T * E);
    reference::mamba_conv_prompt(dims, T, to_double(c.x).data(), c.ld_x(), to_double(c.w).data(),
                                 to_double(c.bias).data(), wr.data(), ur.data());
    const auto bcd = to_double(c.bc);
    // The scan from the backend's u, so that each op is held to its own error.
    reference::mamba_scan_prompt(dims, T, to_double(u.read()).data(), to_double(c.dt_in).data(),
                                 to_double(c.dt_bias).data(), to_double(c.a_log).data(), bcd.data(), bcd.data() + S,
                                 c.ld_bc(), to_double(c.D).data(), sr.data(), yr.data());
    const std::string what = describe(dims, T);
    expect_near(u.read(), ur, 1e-6, 1e-5, "u " + what);
    expect_near(window.read(), wr, 0, 0, "window " + what);
    expect_near(y.read(), yr, 1e-5, 1e-4, "y " + what);
    expect_near(state.read(), sr, 1e-5, 1e-4, "state " + what);
  }
}

// Three sequences in slots 2, 0 and 3 of a pool of four windows and states, stepped a token at a
// time together: every row, window and state has the bits of its sequence's prompt.
TEST_P(ConformanceHybrid, MambaStepsGiveThePromptsBits) {
  Rng rng(44);
  for (const MambaDims& dims : {MambaDims{5, 3, 2}, MambaDims{67, 16, 4}, MambaDims{33, 7, 1}}) {
    const int64_t E = dims.channels, S = dims.state, K = dims.conv, T = 6, W = (K - 1) * E;
    const std::vector<int32_t> slots = {2, 0, 3};
    const auto rows = static_cast<int64_t>(slots.size());
    std::vector<MambaCase> seqs;
    for (int64_t r = 0; r < rows; ++r) seqs.push_back(MambaCase::random(dims, T, rng));
    // The weights are one layer's: every sequence reads the first one's.
    const MambaCase& p = seqs[0];
    const auto w = on_device(p.w), bias = on_device(p.bias), dt_bias = on_device(p.dt_bias);
    const auto a_log = on_device(p.a_log), D = on_device(p.D);
    std::vector<std::vector<float>> u_prompt, y_prompt, window_after, state_after;
    for (const MambaCase& c : seqs) {
      auto window = on_device(c.window), state = on_device(c.state);
      auto u = zeros<float>(T * E), y = zeros<float>(T * E);
      const auto bc = on_device(c.bc);
      backend().mamba_conv_prompt(dims, T, on_device(c.x), c.ld_x(), w, bias, window, u);
      backend().mamba_scan_prompt(dims, T, u, on_device(c.dt_in), dt_bias, a_log, bc, bc.ptr() + S, c.ld_bc(), D, state,
                                  y);
      u_prompt.push_back(u.read()), y_prompt.push_back(y.read());
      window_after.push_back(window.read()), state_after.push_back(state.read());
    }
    std::vector<float> windows(4 * W, -7.0f), states(4 * E * S, -7.0f);  // slot 1: no sequence's
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(seqs[r].window.begin(), seqs[r].window.end(), windows.begin() + slots[r] * W);
      std::copy(seqs[r].state.begin(), seqs[r].state.end(), states.begin() + slots[r] * E * S);
    }
    auto dwindows = on_device(windows), dstates = on_device(states);
    const auto dslots = on_device(slots);
    const std::string what = describe(dims, T);
    for (int64_t t = 0; t < T; ++t) {
      std::vector<float> x, dt_in, bc;  // row r: sequence r's token t
      for (const MambaCase& c : seqs) {
        x.insert(x.end(), c.x.begin() + t * c.ld_x(), c.x.begin() + (t + 1) * c.ld_x());
        dt_in.insert(dt_in.end(), c.dt_in.begin() + t * E, c.dt_in.begin() + (t + 1) * E);
        bc.insert(bc.end(), c.bc.begin() + t * c.ld_bc(), c.bc.begin() + (t + 1) * c.ld_bc());
      }
      auto u = zeros<float>(rows * E), y = zeros<float>(rows * E);
      const auto dbc = on_device(bc);
      backend().mamba_conv_step(dims, rows, on_device(x), p.ld_x(), w, bias, dwindows, dslots, u,
                                OptionSpelling::field);
      backend().mamba_scan_step(dims, rows, u, on_device(dt_in), dt_bias, a_log, dbc, dbc.ptr() + S, p.ld_bc(), D,
                                dstates, dslots, y, OptionSpelling::field);
      const auto us = u.read(), ys = y.read();
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(std::vector<float>(us.begin() + r * E, us.begin() + (r + 1) * E),
                  std::vector<float>(u_prompt[r].begin() + t * E, u_prompt[r].begin() + (t + 1) * E))
            << "u, sequence " << r << " token " << t << " " << what;
        ASSERT_EQ(std::vector<float>(ys.begin() + r * E, ys.begin() + (r + 1) * E),
                  std::vector<float>(y_prompt[r].begin() + t * E, y_prompt[r].begin() + (t + 1) * E))
            << "y, sequence " << r << " token " << t << " " << what;
      }
    }
    const auto wa = dwindows.read(), sa = dstates.read();
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(std::vector<float>(wa.begin() + slots[r] * W, wa.begin() + (slots[r] + 1) * W), window_after[r])
          << "window, sequence " << r << " " << what;
      EXPECT_EQ(std::vector<float>(sa.begin() + slots[r] * E * S, sa.begin() + (slots[r] + 1) * E * S), state_after[r])
          << "state, sequence " << r << " " << what;
    }
    EXPECT_EQ(std::vector<float>(wa.begin() + W, wa.begin() + 2 * W), std::vector<float>(W, -7.0f))
        << "slot 1 " << what;
  }
}

TEST_P(ConformanceHybrid, MambaBadDimsNameTheField) {
  auto buf = zeros<float>(64);
  const std::string message = error_of([&] {
    backend().mamba_scan_prompt({2, 0, 2}, 1, buf, buf, buf, buf, buf, buf, 1, buf, buf, buf);
  });
  EXPECT_NE(message.find("'state'"), std::string::npos) << message;
}

// A matrix's stored bytes on the device.
struct StoredWeights {
  StoredWeights(backends::Backend& b, const Quantized& q)
      : bytes(b, q.bytes), matrix{q.type, bytes.ptr(), q.rows, q.cols, {}} {}
  DeviceArray<uint8_t> bytes;
  backends::DeviceMatrix matrix;
};

// How far a backend's rounding of a matmul's inputs (Backend::matmul_input_rounding) may move each
// output of the GMU, on top of f32's own rounding: in_proj's moves each gate by at most
// input_rounding_error, |silu'| < 1.1 and |memory| carry that into the gated value (gated: the
// reference's), and out_proj adds its own rounding of the moved values to their change times
// |out_proj|.
std::vector<double> gmu_rounding_bounds(const Quantized& in, const Quantized& out, const std::vector<float>& x,
                                        const std::vector<float>& memory, const std::vector<double>& gated,
                                        const backends::MatmulInputRounding& rounding) {
  const int64_t D = in.cols, E = in.rows, rows = static_cast<int64_t>(x.size()) / D;
  std::vector<double> bounds(rows * D), moved(E);
  std::vector<float> reach(E);  // |gated| plus how far it may have moved
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = 0; e < E; ++e) {
      moved[e] = 1.1 * std::fabs(memory[r * E + e]) * input_rounding_error(in, x.data() + r * D, e, rounding);
      reach[e] = static_cast<float>(std::fabs(gated[r * E + e]) + moved[e]);
    }
    for (int64_t k = 0; k < D; ++k) {
      double bound = input_rounding_error(out, reach.data(), k, rounding);
      for (int64_t e = 0; e < E; ++e) bound += std::fabs(out.dequantized[k * E + e]) * moved[e];
      bounds[r * D + k] = bound;
    }
  }
  return bounds;
}

// Within f32's 1e-5 + 1e-4 |want| and the inputs' rounding.
void expect_gmu_near(const std::vector<float>& got, const std::vector<double>& want,
                     const std::vector<double>& rounding, const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-5 + 1e-4 * std::fabs(want[i]) + rounding[i])) {
      ADD_FAILURE() << what << ": index " << i << ": " << got[i] << " vs " << want[i] << " (rounding bound "
                    << rounding[i] << ")";
      return;
    }
}

TEST_P(ConformanceHybrid, GmuMatchesTheReference) {
  Rng rng(45);
  for (WeightType type : {WeightType::f32, WeightType::bf16})
    for (const auto& [D, E, rows] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{32, 64, 1}, {64, 96, 9}, {96, 64, 40}})
      for (MatmulOrder order : {MatmulOrder::by_size, MatmulOrder::gemv, MatmulOrder::gemm}) {
        const Quantized in = make_weights(type, E, D, rng), out = make_weights(type, D, E, rng);
        const StoredWeights din(backend(), in), dout(backend(), out);
        const auto x = random_vector(rows * D, rng), memory = random_vector(rows * E, rng, -2, 2);
        const auto start = random_vector(rows * D, rng);
        std::vector<double> want(rows * D), gated(rows * E);
        reference::gmu_forward(to_double(in.dequantized).data(), to_double(out.dequantized).data(), D, E,
                               to_double(x).data(), to_double(memory).data(), want.data(), rows, gated.data());
        const auto rounding = gmu_rounding_bounds(in, out, x, memory, gated, backend().matmul_input_rounding(type));
        const std::string what = std::string(kernels::weight_type_name(type)) + " D=" + std::to_string(D) +
                                 " E=" + std::to_string(E) + " rows=" + std::to_string(rows) +
                                 " order=" + std::to_string(static_cast<int>(order));
        auto gate = zeros<float>(rows * E), y = on_device(start);
        backend().gmu_forward(din.matrix, dout.matrix, on_device(x), on_device(memory), gate, y, rows, false, order);
        expect_gmu_near(y.read(), want, rounding, what);
        auto added = on_device(start);  // accumulate: start + the same product
        backend().gmu_forward(din.matrix, dout.matrix, on_device(x), on_device(memory), gate, added, rows, true, order);
        for (int64_t i = 0; i < rows * D; ++i) want[i] += start[i];
        expect_gmu_near(added.read(), want, rounding, what + " accumulate");
      }
}

TEST_P(ConformanceHybrid, GmuMismatchedProjectionsNameBothShapes) {
  Rng rng(46);
  const Quantized in = make_weights(WeightType::f32, 64, 32, rng), out = make_weights(WeightType::f32, 32, 96, rng);
  const StoredWeights din(backend(), in), dout(backend(), out);
  auto buf = zeros<float>(96);
  const std::string message = error_of(
      [&] { backend().gmu_forward(din.matrix, dout.matrix, buf, buf, buf, buf, 1, false, MatmulOrder::by_size); });
  EXPECT_NE(message.find("[64, 32]"), std::string::npos) << message;
  EXPECT_NE(message.find("[32, 96]"), std::string::npos) << message;
}

// AttentionDims::window through Backend::attention_forward: windows of one key, shorter than a
// tile, straddling tiles and longer than the sequence. The backward refuses a window by name.
TEST_P(ConformanceHybrid, SlidingWindowAttentionForward) {
  Rng rng(47);
  const kernels::AttentionDims shapes[] = {{AttentionKind::baseline, 1, 33, 2, 1, 16},
                                           {AttentionKind::diff, 2, 70, 4, 2, 32},
                                           {AttentionKind::diff2, 1, 129, 4, 2, 24},
                                           {AttentionKind::diff_grouped, 1, 65, 4, 2, 32, 2}};
  for (kernels::AttentionDims a : shapes)
    for (int64_t window : {1, 5, 64, 65, 500}) {
      a.window = window;
      const int64_t N = a.B * a.T;
      const auto q = random_vector(N * a.q_width(), rng, -3, 3), k = random_vector(N * a.k_width(), rng);
      const auto v = random_vector(N * a.v_width(), rng);
      const auto lambda = random_lambda(a.variant(), N, rng);
      std::vector<float> want(N * a.out_width());
      attention_forward_reference(a, q.data(), k.data(), v.data(), lambda.empty() ? nullptr : lambda.data(),
                                  want.data());
      const auto dl = on_device(lambda);
      auto out = zeros<float>(N * a.out_width()), lse = zeros<float>(kernels::attention_lse_floats(a));
      auto maps = zeros<float>(kernels::attention_maps_out_floats(a));
      const backends::DeviceAttentionSaved saved{lse, a.variant().paired() ? maps.ptr() : nullptr};
      const auto dq = on_device(q), dk = on_device(k), dv = on_device(v);
      backend().attention_forward(a, dq, dk, dv, lambda.empty() ? nullptr : dl.ptr(), out, saved);
      std::string mismatch;
      EXPECT_TRUE(all_close(out.read(), want, 1e-5, 1e-4, &mismatch))
          << kernels::attention_kind_name(a.kind) << " T=" << a.T << " window=" << window << ": " << mismatch;
    }
  if (!backend().trains()) return;
  const kernels::AttentionDims a{AttentionKind::diff, 1, 8, 2, 1, 16, 1, 4};
  auto buf = zeros<float>(1024);
  const std::string message = error_of([&] {
    backend().attention_backward(a, buf, buf, buf, buf, buf, {buf, buf}, buf, buf, buf, buf, buf);
  });
  EXPECT_NE(message.find("sliding window"), std::string::npos) << message;
}

// DecodeAttentionDims::window through the paged KV cache: the last 5 positions of a sequence of
// 37 in blocks {5, 1, 6} of 16 positions attend to their last `window` positions; every position
// before the earliest row's window holds NaN, which a row must not read.
TEST_P(ConformanceHybrid, SlidingWindowPagedAttention) {
  Rng rng(48);
  const kernels::AttentionVariant variants[] = {{AttentionKind::baseline, 4, 2, 32},
                                                {AttentionKind::diff, 2, 1, 16},
                                                {AttentionKind::diff2, 4, 2, 32},
                                                {AttentionKind::diff_grouped, 4, 1, 16, 2}};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // 37 positions in three blocks; and 515 in 33 blocks in reverse order: rows of 511 to 515, which
  // end in the 16th or the 17th split-K chunk of a device that splits such rows at 32 positions
  // (Vulkan's), their windows of 1 starting in either.
  std::vector<int32_t> reversed(33);
  for (int32_t b = 0; b < 33; ++b) reversed[b] = 32 - b;
  const std::pair<int64_t, std::vector<int32_t>> caches[] = {{37, {5, 1, 6}}, {515, reversed}};
  for (const auto& [L, table] : caches)
    for (const kernels::AttentionVariant& variant : variants)
      for (kernels::KvStorage storage : {kernels::KvStorage::f32, kernels::KvStorage::bf16})
        for (int64_t window : {1, 5, 16, 17, 100, 300}) {
          const int64_t P = 16, layers = 2, layer = 1, R = 5;
          const int64_t blocks = *std::max_element(table.begin(), table.end()) + 1;
          kernels::DecodeAttentionDims block{variant, P, storage};
          block.window = window;
          const int64_t key_bytes = kernels::key_region_bytes(block);
          const int64_t layer_bytes = key_bytes + kernels::value_region_bytes(block);
          const backends::DeviceBuffer pool = backend().allocate(blocks * layers * layer_bytes, true);
          const backends::PagedKv kv{block, pool.as<unsigned char>(), layers, layer_bytes, key_bytes, blocks};
          auto k = random_vector(L * variant.k_width(), rng), v = random_vector(L * variant.v_width(), rng);
          const int64_t unread = block.first_position(L - R + 1);  // the earliest row's first position
          std::fill(k.begin(), k.begin() + unread * variant.k_width(), nan);
          std::fill(v.begin(), v.begin() + unread * variant.v_width(), nan);
          std::vector<int32_t> slots;
          for (int64_t t = 0; t < L; ++t) slots.push_back(static_cast<int32_t>(table[t / P] * P + t % P));
          backend().paged_store(kv, layer, on_device(slots), L, on_device(k), on_device(v));
          std::vector<int32_t> lengths, tables(R, 0);
          for (int64_t i = 0; i < R; ++i) lengths.push_back(static_cast<int32_t>(L - R + 1 + i));
          const auto q = random_vector(R * variant.q_width(), rng, -3, 3);
          const auto lambda = random_lambda(variant, R, rng);
          const auto dlengths = on_device(lengths), dtables = on_device(tables), dblocks = on_device(table);
          const backends::PagedRows rows{R, L, dlengths, dtables, dblocks};
          auto out = zeros<float>(R * variant.out_width());
          const auto dl = on_device(lambda);
          backend().paged_attention(kv, layer, rows, on_device(q), lambda.empty() ? nullptr : dl.ptr(), out);
          const auto got = out.read();
          // Each row against the reference over a contiguous cache the host writes with store_kv.
          kernels::DecodeAttentionDims whole{variant, L, storage};
          whole.window = window;
          std::vector<unsigned char> keys(kernels::key_region_bytes(whole)), values(kernels::value_region_bytes(whole));
          kernels::store_kv(whole, keys.data(), values.data(), 0, L, k.data(), v.data());
          for (int64_t i = 0; i < R; ++i) {
            const float* row_lambda = variant.lambda_source() == kernels::LambdaSource::token_logits
                                          ? lambda.data() + i * variant.H
                                      : lambda.empty() ? nullptr
                                                       : lambda.data();
            const auto want = decode_attention_reference(whole, lengths[i], q.data() + i * variant.q_width(),
                                                         keys.data(), values.data(), row_lambda);
            for (int64_t x = 0; x < variant.out_width(); ++x)
              ASSERT_NEAR(got[i * variant.out_width() + x], want[x], 2e-5)
                  << kernels::attention_kind_name(variant.kind) << " " << kernels::kv_storage_name(storage)
                  << " window " << window << " length " << lengths[i] << " column " << x;
          }
        }
}

INSTANTIATE_TEST_SUITE_P(Backends, ConformanceHybrid, ::testing::ValuesIn(backends_under_test()), backend_test_name);

// A backend without the ops (runs_hybrid() false) refuses each by name, with the device's name.
class HybridRefusal : public Conformance {};

TEST_P(HybridRefusal, EachOpIsAnErrorNamingItAndTheDevice) {
  if (backend().runs_hybrid()) GTEST_SKIP() << GetParam().name << " runs a hybrid stack's ops";
  auto buf = zeros<float>(64);
  const auto slots = zeros<int32_t>(1);
  const MambaDims dims{4, 2, 2};
  const backends::DeviceMatrix m{WeightType::f32, buf.ptr(), 4, 4, {}};
  const std::vector<std::pair<std::string, std::function<void()>>> ops = {
      {"layernorm_forward", [&] { backend().layernorm_forward(buf, buf, buf, buf, buf, buf, 1, 4, 1e-5f); }},
      {"layernorm_backward", [&] { backend().layernorm_backward(buf, buf, buf, buf, buf, buf, buf, buf, 1, 4); }},
      {"add_bias", [&] { backend().add_bias(buf, buf, 1, 4); }},
      {"mamba_conv_prompt", [&] { backend().mamba_conv_prompt(dims, 1, buf, 4, buf, buf, buf, buf); }},
      {"mamba_scan_prompt",
       [&] { backend().mamba_scan_prompt(dims, 1, buf, buf, buf, buf, buf, buf, 2, buf, buf, buf); }},
      {"mamba_conv_step",
       [&] { backend().mamba_conv_step(dims, 1, buf, 4, buf, buf, buf, slots, buf, OptionSpelling::field); }},
      {"mamba_scan_step",
       [&] {
         backend().mamba_scan_step(dims, 1, buf, buf, buf, buf, buf, buf, 2, buf, buf, slots, buf,
                                   OptionSpelling::field);
       }},
      {"gmu_forward", [&] { backend().gmu_forward(m, m, buf, buf, buf, buf, 1, false, MatmulOrder::by_size); }}};
  for (const auto& [op, call] : ops) {
    const std::string message = error_of(call);
    EXPECT_NE(message.find(op), std::string::npos) << message;
    EXPECT_NE(message.find(backend().info().name), std::string::npos) << message;
  }
}

// Its attention refuses a sliding window by name, in the fused forward and in paged decode.
TEST_P(HybridRefusal, ASlidingWindowIsAnErrorNamingIt) {
  if (backend().runs_hybrid()) GTEST_SKIP() << GetParam().name << " runs a hybrid stack's ops";
  const kernels::AttentionDims a{AttentionKind::diff, 1, 8, 2, 1, 16, 1, 4};
  auto buf = zeros<float>(1024);
  const backends::DeviceAttentionSaved saved{buf, buf};
  std::string message = error_of([&] { backend().attention_forward(a, buf, buf, buf, buf, buf, saved); });
  EXPECT_NE(message.find("attention_forward with a sliding window"), std::string::npos) << message;
  kernels::DecodeAttentionDims block{kernels::AttentionVariant{AttentionKind::diff, 2, 1, 16}, 16,
                                     kernels::KvStorage::f32};
  block.window = 4;
  const int64_t key_bytes = kernels::key_region_bytes(block);
  const int64_t layer_bytes = key_bytes + kernels::value_region_bytes(block);
  const backends::DeviceBuffer pool = backend().allocate(2 * layer_bytes, true);
  const backends::PagedKv kv{block, pool.as<unsigned char>(), 1, layer_bytes, key_bytes, 2};
  const auto ints = zeros<int32_t>(2);
  const backends::PagedRows rows{1, 4, ints, ints, ints};
  message = error_of([&] { backend().paged_attention(kv, 0, rows, buf, buf, buf); });
  EXPECT_NE(message.find("paged_attention with a sliding window"), std::string::npos) << message;
}

// A hybrid model's forward is refused when its activations are planned, naming the device and
// where the model runs.
TEST_P(HybridRefusal, AHybridModelIsRefusedNamingTheDeviceAndTheCpu) {
  if (backend().runs_hybrid()) GTEST_SKIP() << GetParam().name << " runs a hybrid stack's ops";
  const model::ModelConfig c = model::config_from_phi4flash({{"model_type", "phi4flash"},
                                                             {"vocab_size", 32},
                                                             {"hidden_size", 16},
                                                             {"intermediate_size", 32},
                                                             {"num_hidden_layers", 4},
                                                             {"num_attention_heads", 4},
                                                             {"num_key_value_heads", 2},
                                                             {"sliding_window", 3}},
                                                            "config.json");
  const std::string message = error_of([&] { model::HybridActivations acts(c, 1, 4, backend()); });
  EXPECT_NE(message.find("hybrid model"), std::string::npos) << message;
  EXPECT_NE(message.find(backend().info().name), std::string::npos) << message;
  EXPECT_NE(message.find("--device cpu"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Backends, HybridRefusal, ::testing::ValuesIn(backends_under_test()), backend_test_name);

}  // namespace
}  // namespace difftx::testing
