// `difftx bench matmul`: one matmul order (MatmulOrder) at N = --rows rows of x, the engine's
// batched steps. Each call walks a different copy of the weights (copies_for: DRAM, not the L3),
// as a decode step does. Figures: rows of x per second and its ratio to the first N of --rows
// (what batching N sequences buys at that order), weight GB/s and GFLOPS (2 N rows cols per
// call). With --sgemm, OpenBLAS sgemm (Trans N, T: by_size's F32 GEMM) on the same shape and N
// with F32 weights is timed in the same rounds, interleaved, and each row gets its GFLOPS and
// the ratio (the yardstick of the float types' gemm order). Each N is timed --rounds times,
// interleaved with the others, and its best kept; so is the least CPU time of a call (cpu_ms,
// cpu_gflops; at one thread the work itself, which a busy shared host does not stretch). With
// --panels, each copy of a block-type matrix has its GEMM panels built first (weight_panels.h,
// as the engine's do), where the CPU level's int8 GEMM reads them.
#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "benches.h"
#include "core/error.h"
#include "core/rng.h"
#include "kernels/gemm.h"
#include "kernels/quant/matmul.h"
#include "kernels/quant/weight_panels.h"
#include "measure.h"

namespace difftx::bench {
namespace {

kernels::MatmulOrder parse_order(const std::string& name) {
  if (name == "gemv") return kernels::MatmulOrder::gemv;
  if (name == "gemm") return kernels::MatmulOrder::gemm;
  if (name == "by_size") return kernels::MatmulOrder::by_size;
  fail("--order: expected gemv, gemm or by_size, got '", name, "'");
}

// Best wall time of fn over at least 0.2 s, and its least process CPU time per call, in ms.
std::pair<double, double> timed(const std::function<void()>& fn) {
  double least = 1e30;
  const Timing t = measure(
      [&] {
        const double start = process_cpu_seconds();
        fn();
        least = std::min(least, (process_cpu_seconds() - start) * 1e3);
      },
      0.2);
  return {t.best_ms, least};
}

struct Shape {
  int64_t rows, cols;
};

Shape parse_shape(const std::string& text) {
  const size_t x = text.find('x');
  DIFFTX_CHECK(x != std::string::npos, "--shapes: expected ROWSxCOLS, got '", text, "'");
  try {
    return {std::stoll(text.substr(0, x)), std::stoll(text.substr(x + 1))};
  } catch (const std::exception&) {
    fail("--shapes: expected ROWSxCOLS, got '", text, "'");
  }
}

}  // namespace

int bench_matmul(cli::Args& args) {
  const bool json = args.flag("json");
  const std::string order_name = args.get("order", "gemv");
  const kernels::MatmulOrder order = parse_order(order_name);
  const auto rows = args.get_int_list("rows", "1,4,16,64", cli::IntRange{1, 4096});
  const auto types = args.get_word_list("types", "q4_0,q8_0,bf16");
  const auto shapes = args.get_word_list("shapes", "2048x2048,8192x2048");
  const int64_t rounds = args.get_int("rounds", 5, cli::IntRange{1, 1000});
  const bool with_sgemm = args.flag("sgemm"), with_panels = args.flag("panels");
  args.finish();
  for (const std::string& type_name : types) {
    const kernels::WeightType type = kernels::parse_weight_type(type_name);
    for (const std::string& shape_text : shapes) {
      const Shape s = parse_shape(shape_text);
      const auto bytes = make_bench_weights(type, s.rows, s.cols);
      const int64_t copies = copies_for(static_cast<int64_t>(bytes.size()));
      const std::vector<std::vector<uint8_t>> matrices(copies, bytes);
      std::vector<std::vector<uint8_t>> panels;
      if (with_panels && backends::cpu::kernels().reads_panels(type))
        for (const auto& m : matrices) {
          panels.emplace_back(kernels::quant::weight_panels_bytes(type, s.rows, s.cols));
          kernels::quant::pack_panels({type, m.data(), s.rows, s.cols}, 0, kernels::quant::panel_count(s.rows),
                                      panels.back().data());
        }
      // sgemm's F32 weights, as many copies as the same bytes in F32 take
      std::vector<std::vector<float>> f32;
      if (with_sgemm) {
        const auto b = make_bench_weights(kernels::WeightType::f32, s.rows, s.cols);
        std::vector<float> w(s.rows * s.cols);
        std::memcpy(w.data(), b.data(), b.size());
        f32.assign(copies_for(static_cast<int64_t>(b.size())), w);
      }
      // the Ns in turn, --rounds times, each N's best call over all rounds (the shared machine's
      // busy spells fall on different Ns each round)
      std::vector<double> best(rows.size(), 1e30), best_sgemm(rows.size(), 1e30);
      std::vector<double> cpu(rows.size(), 1e30), cpu_sgemm(rows.size(), 1e30);
      for (int64_t round = 0; round < rounds; ++round)
        for (size_t k = 0; k < rows.size(); ++k) {
          const int64_t N = rows[k];
          std::vector<float> x(N * s.cols), y(N * s.rows);
          Rng rng(3);
          for (auto& v : x) v = static_cast<float>(rng.uniform(-1, 1));
          int64_t next = 0;
          const auto [ms, cpu_ms] = timed([&] {
            const void* p = panels.empty() ? nullptr : panels[next].data();
            backends::cpu::kernels().matmul_by_order({type, matrices[next].data(), s.rows, s.cols, p}, x.data(), y.data(), N, false, order);
            next = (next + 1) % copies;
          });
          best[k] = std::min(best[k], ms), cpu[k] = std::min(cpu[k], cpu_ms);
          if (!with_sgemm) continue;
          next = 0;
          const auto [sgemm_ms, sgemm_cpu_ms] = timed([&] {
            kernels::gemm(kernels::Trans::N, kernels::Trans::T, N, s.rows, s.cols, 1.0f, x.data(), f32[next].data(),
                          0.0f, y.data());
            next = (next + 1) % static_cast<int64_t>(f32.size());
          });
          best_sgemm[k] = std::min(best_sgemm[k], sgemm_ms), cpu_sgemm[k] = std::min(cpu_sgemm[k], sgemm_cpu_ms);
        }
      for (size_t k = 0; k < rows.size(); ++k) {
        const double rows_per_s = rows[k] / (best[k] * 1e-3), single = 1 / (best[0] * 1e-3) * rows[0];
        const double flops = 2.0 * rows[k] * s.rows * s.cols, gflops = flops / (best[k] * 1e-3) / 1e9;
        std::vector<Field> fields = {str("op", "matmul"), str("order", order_name),
                                     str("type", kernels::weight_type_name(type)), str("shape", shape_text),
                                     num("N", rows[k], 0), num("ms", best[k], 3),
                                     num("rows_per_s", rows_per_s, 0), num("vs_first", rows_per_s / single, 2),
                                     num("gbps", bytes.size() / (best[k] * 1e-3) / 1e9, 1), num("gflops", gflops, 1),
                                     num("cpu_ms", cpu[k], 3), num("cpu_gflops", flops / (cpu[k] * 1e-3) / 1e9, 1)};
        if (with_sgemm) {
          const double sgemm_gflops = flops / (best_sgemm[k] * 1e-3) / 1e9;
          fields.push_back(num("sgemm_gflops", sgemm_gflops, 1));
          fields.push_back(num("vs_sgemm", gflops / sgemm_gflops, 2));
          fields.push_back(num("sgemm_cpu_gflops", flops / (cpu_sgemm[k] * 1e-3) / 1e9, 1));
          fields.push_back(num("vs_sgemm_cpu", cpu_sgemm[k] / cpu[k], 2));
        }
        print_row(json, fields);
      }
    }
  }
  return 0;
}

}  // namespace difftx::bench
