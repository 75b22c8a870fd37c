// `difftx bench attn`: the fused attention kernels, forward and backward, per variant.
// FLOPs as docs/SPEC.md §4: unmasked (causal) scores only, T(T+1)/2 per softmax map, 2d each for QK^T
// and 2*dv each for PV; the backward pass is counted as 2.5x its forward FLOPs (it recomputes
// QK^T and does four more products: dP, dV, dK, dQ). Equal parameters: diff with H heads of
// width d against baseline with 2H heads of width d (and Hkv = H resp. 2H); diff2 with H output
// heads (2H query heads over Hkv = H kv heads) runs as many maps as that baseline.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "benches.h"
#include "core/rng.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/flash.h"
#include "backends/cpu/cpu_level.h"
#include "kernels/gemm.h"
#include "measure.h"

namespace difftx::bench {

using kernels::AttentionDims;

namespace {

struct Inputs {
  std::vector<float> q, k, v, lambda, out, lse, maps_out, dout, dq, dk, dv, dlambda;
  explicit Inputs(const AttentionDims& a) {
    const int64_t N = a.B * a.T;
    Rng rng(42);
    auto fill = [&](std::vector<float>& x, int64_t n, double lo, double hi) {
      x.resize(n);
      for (auto& e : x) e = static_cast<float>(rng.uniform(lo, hi));
    };
    fill(q, N * a.q_width(), -2, 2);
    fill(k, N * a.k_width(), -1, 1);
    fill(v, N * a.v_width(), -1, 1);
    fill(dout, N * a.out_width(), -1, 1);
    fill(lambda, a.variant().lambda_floats(N), 0.2, 0.8);
    out.resize(N * a.out_width());
    lse.resize(kernels::attention_lse_floats(a));
    maps_out.resize(kernels::attention_maps_out_floats(a));
    dq.resize(q.size());
    dk.resize(k.size());
    dv.resize(v.size());
    dlambda.resize(lambda.size());
  }
  kernels::AttentionSaved saved() { return {lse.data(), maps_out.empty() ? nullptr : maps_out.data()}; }
  const float* lam() const { return lambda.empty() ? nullptr : lambda.data(); }
};

constexpr int kRounds = 3;

double forward_flops(const AttentionDims& a) { return a.B * a.variant().forward_flops(a.T); }

// One variant at one shape: its inputs and the best forward and backward times seen so far.
struct Case {
  AttentionDims dims;
  Inputs in;
  double fwd_ms = 1e300, bwd_ms = 1e300;
  explicit Case(const AttentionDims& a) : dims(a), in(a) {}

  // Times both passes (best of repeated runs for `seconds` each) and keeps the best so far.
  void measure_once(double seconds) {
    const AttentionDims& a = dims;
    const Timing fwd = measure(
        [&] { backends::cpu::kernels().attention_forward(a, in.q.data(), in.k.data(), in.v.data(), in.lam(), in.out.data(), in.saved()); },
        seconds, 2);
    const Timing bwd = measure(
        [&] {
          backends::cpu::kernels().attention_backward(a, in.q.data(), in.k.data(), in.v.data(), in.lam(), in.out.data(), in.saved(),
                             in.dout.data(), in.dq.data(), in.dk.data(), in.dv.data(),
                             in.dlambda.empty() ? nullptr : in.dlambda.data());
        },
        seconds, 2);
    fwd_ms = std::min(fwd_ms, fwd.best_ms);
    bwd_ms = std::min(bwd_ms, bwd.best_ms);
  }

  void print(bool json) const {
    const double flops = forward_flops(dims);
    const char* path = backends::cpu::kernels().flash_default_path(dims) == kernels::flash::Path::simd ? cpu_level_name(cpu_level()) : "scalar";
    for (int pass = 0; pass < 2; ++pass) {
      const double ms = pass == 0 ? fwd_ms : bwd_ms;
      const double f = pass == 0 ? flops : 2.5 * flops;
      print_row(json, {str("op", pass == 0 ? "attn_fwd" : "attn_bwd"),
                       str("variant", kernels::attention_kind_name(dims.kind)), num("T", dims.T, 0),
                       num("d", dims.d, 0), num("B", dims.B, 0), num("H", dims.H, 0),
                       num("Hkv", dims.Hkv, 0), num("gflops", f / (ms * 1e-3) / 1e9, 1), num("ms", ms, 3),
                       str("path", path)});
    }
  }
};

}  // namespace

int bench_attn(cli::Args& args) {
  const bool json = args.flag("json");
  const bool quick = args.flag("quick");
  args.finish();
  const int64_t n = 1024;
  const double gemm_gflops = kernels::measure_sgemm_gflops(n, 0.5);
  print_row(json, {str("op", "gemm"), str("variant", "sgemm"), num("T", n, 0), num("d", n, 0),
                   num("gflops", gemm_gflops, 1), num("ms", 2.0 * n * n * n / gemm_gflops / 1e6, 3)});
  std::vector<int64_t> lengths = {512, 2048};
  if (!quick) lengths.push_back(8192);
  for (int64_t T : lengths)
    for (int64_t d : {64, 128}) {
      const int64_t H = T <= 512 ? 4 : T <= 2048 ? 2 : 1;  // diff heads; ~T^2 * H work kept moderate
      std::vector<Case> cases;
      cases.emplace_back(AttentionDims{kernels::AttentionKind::baseline, 1, T, 2 * H, 2 * H, d});
      cases.emplace_back(AttentionDims{kernels::AttentionKind::diff, 1, T, H, H, d});
      cases.emplace_back(AttentionDims{kernels::AttentionKind::diff2, 1, T, H, H, d});
      // Rounds that alternate the variants, best time of each kept: a burst of load from other
      // processes then spoils one round of one variant, not the ratio.
      for (int round = 0; round < kRounds; ++round)
        for (Case& c : cases) c.measure_once(T >= 8192 ? 0.1 : 0.15);
      for (const Case& c : cases) c.print(json);
      for (int i = 1; i < 3; ++i) {
        const std::string name = std::string(kernels::attention_kind_name(cases[i].dims.kind)) + "/baseline";
        print_row(json, {str("op", "attn_ratio"), str("variant", name), num("T", T, 0), num("d", d, 0),
                         num("fwd_time_ratio", cases[i].fwd_ms / cases[0].fwd_ms, 3),
                         num("bwd_time_ratio", cases[i].bwd_ms / cases[0].bwd_ms, 3)});
      }
    }
  return 0;
}

}  // namespace difftx::bench
