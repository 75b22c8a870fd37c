// `difftx bench analysis`: the analysis kernels against the trained path. The quantized-logit
// attention (materialises T x T maps; evaluation only) against the fused forward at the same
// shape, GFLOPS counted as in bench attn (unmasked scores only, docs/SPEC.md §4); the exact outlier
// statistics in values per second, per pass, and the logit maps they read.
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "benches.h"
#include "core/rng.h"
#include "eval/abs_value_stats.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_logits.h"
#include "kernels/attention/attention_quantized.h"
#include "measure.h"

namespace difftx::bench {
namespace {

std::vector<float> random_floats(int64_t n, uint64_t seed, double lo, double hi) {
  Rng rng(seed);
  std::vector<float> x(n);
  for (auto& e : x) e = static_cast<float>(rng.uniform(lo, hi));
  return x;
}

void bench_quantized_attention(bool json, int64_t T, int64_t d, kernels::AttentionKind kind, int64_t H) {
  const kernels::AttentionDims a{kind, 1, T, H, H, d};
  const int64_t N = a.B * a.T;
  const auto q = random_floats(N * a.q_width(), 1, -2, 2), k = random_floats(N * a.k_width(), 2, -1, 1);
  const auto v = random_floats(N * a.v_width(), 3, -1, 1);
  const auto lambda = random_floats(std::max<int64_t>(a.variant().lambda_floats(N), 1), 4, 0.2, 0.8);
  std::vector<float> out(N * a.out_width()), lse(kernels::attention_lse_floats(a)),
      maps_out(kernels::attention_maps_out_floats(a));
  const float* lam = a.variant().paired() ? lambda.data() : nullptr;
  double fused = 1e300, quantized = 1e300;
  for (int round = 0; round < 3; ++round) {  // alternate, keep each one's best (bench attn's reasoning)
    fused = std::min(fused, measure([&] {
                              backends::cpu::kernels().attention_forward(a, q.data(), k.data(), v.data(), lam, out.data(),
                                                {lse.data(), maps_out.empty() ? nullptr : maps_out.data()});
                            }, 0.15, 2).best_ms);
    quantized = std::min(quantized, measure([&] {
                                      kernels::attention_forward_quantized(a, q.data(), k.data(), v.data(), lam,
                                                                           out.data(), 8);
                                    }, 0.15, 2).best_ms);
  }
  const double flops = a.variant().forward_flops(T);
  for (int i = 0; i < 2; ++i) {
    const double ms = i == 0 ? fused : quantized;
    print_row(json, {str("op", i == 0 ? "attn_fwd" : "attn_fwd_quantized8"),
                     str("variant", kernels::attention_kind_name(kind)), num("T", T, 0), num("d", d, 0), num("H", H, 0),
                     num("gflops", flops / (ms * 1e-3) / 1e9, 1),
                     num("ms", ms, 3)});
  }
  print_row(json, {str("op", "quantized_over_fused"), str("variant", kernels::attention_kind_name(kind)),
                   num("T", T, 0), num("d", d, 0), num("time_ratio", quantized / fused, 2)});
}

void bench_outlier_stats(bool json) {
  const int64_t n = int64_t{1} << 24;
  Rng rng(5);
  std::vector<float> x(n);
  for (auto& e : x) e = static_cast<float>(rng.normal() * 3.0);
  eval::AbsValueStats stats("bench");
  const Timing pass1 = measure([&] { stats.add(x.data(), n); }, 0.3, 2);
  stats.start_refinement();
  const Timing pass2 = measure([&] { stats.add(x.data(), n); }, 0.3, 2);
  print_row(json, {str("op", "abs_stats_pass1"), num("values", static_cast<double>(n), 0),
                   num("gvalues_per_s", n / (pass1.best_ms * 1e-3) / 1e9, 2), num("ms", pass1.best_ms, 2)});
  print_row(json, {str("op", "abs_stats_pass2"), num("values", static_cast<double>(n), 0),
                   num("gvalues_per_s", n / (pass2.best_ms * 1e-3) / 1e9, 2), num("ms", pass2.best_ms, 2)});

  // One logit map of a diff model as analyze outliers computes it (T = 256, d = 64).
  const kernels::AttentionDims a{kernels::AttentionKind::diff, 1, 256, 4, 4, 64};
  const auto q = random_floats(a.T * a.q_width(), 6, -1, 1), k = random_floats(a.T * a.k_width(), 7, -1, 1);
  std::vector<float> S(a.T * a.T);
  const Timing logits =
      measure([&] { kernels::attention_map_logits(a, q.data(), k.data(), 0, 1, 0.125f, S.data()); }, 0.3, 3);
  print_row(json, {str("op", "attention_map_logits"), num("T", a.T, 0), num("d", a.d, 0),
                   num("gvalues_per_s", a.T * (a.T + 1) / 2.0 / (logits.best_ms * 1e-3) / 1e9, 2),
                   num("ms", logits.best_ms, 3)});
}

}  // namespace

int bench_analysis(cli::Args& args) {
  const bool json = args.flag("json");
  args.finish();
  for (int64_t T : {512, 2048}) {
    bench_quantized_attention(json, T, 64, kernels::AttentionKind::baseline, 4);
    bench_quantized_attention(json, T, 64, kernels::AttentionKind::diff, 2);
    bench_quantized_attention(json, T, 64, kernels::AttentionKind::diff2, 2);
  }
  bench_outlier_stats(json);
  return 0;
}

}  // namespace difftx::bench
