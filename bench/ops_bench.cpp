// `difftx bench ops`: memory throughput of the fused decoder ops (src/kernels/ops.h) at
// model-like sizes. These ops are mostly memory-bound, so the figure is GB/s of the bytes each call
// must move at least (every input read once, every output written once; small vectors such
// as gains and rstd ignored), set against a memcpy of as many bytes measured in the same run.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "benches.h"
#include "core/rng.h"
#include "core/threading.h"
#include "kernels/ops.h"
#include "measure.h"

namespace difftx::bench {
namespace {

constexpr double kSeconds = 0.3;  // per measurement

std::vector<float> random_floats(int64_t n, uint64_t seed, double lo = -1, double hi = 1) {
  std::vector<float> v(n);
  Rng rng(seed);
  for (auto& x : v) x = static_cast<float>(rng.uniform(lo, hi));
  return v;
}

std::vector<int32_t> random_ids(int64_t n, int64_t V, uint64_t seed) {
  std::vector<int32_t> ids(n);
  Rng rng(seed);
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(V));
  return ids;
}

// A parallel memcpy moving the same number of bytes (half read, half written), so that each
// op is compared with plain copying from the same level of the memory hierarchy: the smaller
// cases fit in the 32 MiB L3, the larger ones stream from DRAM.
double copy_gbps(double bytes) {
  static std::map<int64_t, double> measured;
  const int64_t n = static_cast<int64_t>(bytes / 8), chunk = int64_t{16} << 10;
  if (auto it = measured.find(n); it != measured.end()) return it->second;
  const auto src = random_floats(n, 1);
  std::vector<float> dst(n);
  const Timing t = measure(
      [&] {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i += chunk)
          std::memcpy(&dst[i], &src[i], std::min(chunk, n - i) * sizeof(float));
      },
      kSeconds);
  return measured[n] = 8.0 * n / (t.best_ms * 1e-3) / 1e9;
}

class Reporter {
 public:
  explicit Reporter(bool json) : json_(json) {}

  // Times fn and prints one row, with the copy rate for the same bytes.
  void row(const std::string& op, const std::string& pass, const std::string& shape, double bytes,
           const std::function<void()>& fn) {
    const Timing t = measure(fn, kSeconds);
    const double gbps = bytes / (t.best_ms * 1e-3) / 1e9, copy = copy_gbps(bytes);
    print_row(json_, {str("op", op), str("pass", pass), str("shape", shape),
                      num("mbytes", bytes / 1e6, 1), num("ms", t.best_ms, 3), num("gbps", gbps, 1),
                      num("copy_gbps", copy, 1), num("of_copy", gbps / copy, 2)});
  }

 private:
  bool json_;
};

std::string dims(std::initializer_list<int64_t> sizes) {
  std::string s;
  for (int64_t n : sizes) {
    if (!s.empty()) s += 'x';
    s += std::to_string(n);
  }
  return s;
}

void bench_rmsnorm(Reporter& out, int64_t rows, int64_t n, const std::string& op) {
  const auto x = random_floats(rows * n, 2), g = random_floats(n, 3),
             dy = random_floats(rows * n, 4);
  std::vector<float> y(rows * n), rstd(rows), dx(rows * n), dg(n);
  const double plane = 4.0 * rows * n;
  out.row(op, "fwd", dims({rows, n}), 2 * plane,
          [&] { backends::cpu::kernels().rmsnorm_forward(x.data(), g.data(), y.data(), rstd.data(), rows, n, 1e-5f); });
  out.row(op, "bwd", dims({rows, n}), 3 * plane, [&] {
    backends::cpu::kernels().rmsnorm_backward(x.data(), g.data(), rstd.data(), dy.data(), dx.data(), dg.data(), rows, n);
  });
}

void bench_rope(Reporter& out, int64_t B, int64_t T, int64_t heads, int64_t d) {
  std::vector<float> storage(kernels::rope_table_floats(T, d));
  const kernels::RopeTable table = backends::cpu::kernels().rope_table_build(storage.data(), T, d, 10000.0, {});
  auto x = random_floats(B * T * heads * d, 5);
  const double bytes = 2.0 * 4 * x.size();
  for (kernels::RopeStyle style : {kernels::RopeStyle::interleaved, kernels::RopeStyle::half}) {
    const std::string op = style == kernels::RopeStyle::interleaved ? "rope_interleaved" : "rope_half";
    out.row(op, "fwd", dims({B, T, heads, d}), bytes,
            [&] { backends::cpu::kernels().rope_forward(table, style, x.data(), B, T, heads, 0); });
    out.row(op, "bwd", dims({B, T, heads, d}), bytes,
            [&] { backends::cpu::kernels().rope_backward(table, style, x.data(), B, T, heads, 0); });
  }
}

void bench_swiglu(Reporter& out, int64_t rows, int64_t F) {
  const int64_t n = rows * F;
  const auto g = random_floats(n, 6, -4, 4), u = random_floats(n, 7), dh = random_floats(n, 8);
  std::vector<float> h(n), dg(n), du(n);
  out.row("swiglu", "fwd", dims({rows, F}), 3.0 * 4 * n,
          [&] { backends::cpu::kernels().swiglu_forward(g.data(), u.data(), h.data(), n); });
  out.row("swiglu", "bwd", dims({rows, F}), 5.0 * 4 * n,
          [&] { backends::cpu::kernels().swiglu_backward(g.data(), u.data(), dh.data(), dg.data(), du.data(), n); });
}

void bench_cross_entropy(Reporter& out, int64_t rows, int64_t V) {
  const auto logits = random_floats(rows * V, 9, -6, 6);
  auto targets = random_ids(rows, V, 10);
  for (int64_t r = 0; r < rows; r += 64) targets[r] = -1;  // a few ignored rows, as in shards
  std::vector<float> dlogits(rows * V);
  int64_t count = 0;
  const double plane = 4.0 * rows * V;
  out.row("cross_entropy", "fwd+bwd", dims({rows, V}), 2 * plane, [&] {
    backends::cpu::kernels().cross_entropy_forward_backward(logits.data(), targets.data(), dlogits.data(), rows, V, -1,
                                   &count);
  });
  out.row("cross_entropy_sum", "fwd", dims({rows, V}), plane,
          [&] { backends::cpu::kernels().cross_entropy_sum(logits.data(), targets.data(), rows, V, -1, &count); });
}

void bench_embedding(Reporter& out, int64_t rows, int64_t n, int64_t V) {
  const auto table = random_floats(V * n, 11), dy = random_floats(rows * n, 12);
  const auto ids = random_ids(rows, V, 13);
  std::vector<float> y(rows * n), dtable(V * n);
  const double plane = 4.0 * rows * n;
  out.row("embedding", "fwd", dims({rows, n}), 2 * plane,
          [&] { kernels::embedding_forward(table.data(), ids.data(), y.data(), rows, n, V); });
  out.row("embedding", "bwd", dims({rows, n}), 3 * plane,
          [&] { kernels::embedding_backward(ids.data(), dy.data(), dtable.data(), rows, n); });
}

void bench_optimizer(Reporter& out, int64_t n) {
  auto p = random_floats(n, 14), m = random_floats(n, 15), v = random_floats(n, 16, 0, 1);
  const auto g = random_floats(n, 17);
  kernels::AdamWParams hp{1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 10};
  out.row("adamw", "step", dims({n}), 7.0 * 4 * n,
          [&] { backends::cpu::kernels().adamw_update(p.data(), g.data(), m.data(), v.data(), n, hp, 0.5f); });
  volatile double sink = 0;  // keeps the reduction from being optimised away
  out.row("sum_of_squares", "-", dims({n}), 4.0 * n, [&] { sink = backends::cpu::kernels().sum_of_squares(g.data(), n); });
}

}  // namespace

int bench_ops(cli::Args& args) {
  const bool json = args.flag("json");
  args.finish();
  if (!json)
    std::printf(
        "fused decoder ops, %d threads; GB/s of the bytes each call must move; "
        "of_copy = ratio to a memcpy moving as many bytes\n",
        thread_count());
  Reporter out(json);
  // The `small` model scale: 8 sequences of 512 tokens, D = 512 or 1024.
  const int64_t rows = 8 * 512;
  for (int64_t D : {512, 1024}) bench_rmsnorm(out, rows, D, "rmsnorm");
  bench_rmsnorm(out, rows * 4, 128, "rmsnorm_headwise");  // DIFF V1: H = 4 heads of 2d = 128
  for (int64_t d : {64, 128}) bench_rope(out, 8, 512, 8, d);
  for (int64_t F : {1408, 2752}) bench_swiglu(out, rows, F);  // F = 8/3 D rounded up to 64
  bench_cross_entropy(out, rows, 8192);
  bench_cross_entropy(out, 1024, 32768);
  for (int64_t D : {512, 1024}) bench_embedding(out, rows, D, 8192);
  bench_optimizer(out, int64_t{16} << 20);
  return 0;
}

}  // namespace difftx::bench
