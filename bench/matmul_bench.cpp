// `difftx bench matmul`: one matmul order (MatmulOrder) at N = --rows rows of x, the engine's
// batched steps. Each call walks a different copy of the weights (copies_for: DRAM, not the L3),
// as a decode step does. Figures: rows of x per second and its ratio to the first N of --rows
// (what batching N sequences buys at that order), weight GB/s. Each N is timed --rounds times,
// interleaved with the others, and its best kept.
#include <algorithm>
#include <string>
#include <vector>

#include "benches.h"
#include "core/error.h"
#include "core/rng.h"
#include "kernels/quant/matmul.h"
#include "measure.h"

namespace difftx::bench {
namespace {

MatmulOrder parse_order(const std::string& name) {
  if (name == "gemv") return MatmulOrder::gemv;
  if (name == "gemm") return MatmulOrder::gemm;
  if (name == "by_size") return MatmulOrder::by_size;
  fail("--order: expected gemv, gemm or by_size, got '", name, "'");
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
  const MatmulOrder order = parse_order(order_name);
  const auto rows = args.get_int_list("rows", "1,4,16,64", cli::IntRange{1, 4096});
  const auto types = args.get_word_list("types", "q4_0,q8_0,bf16");
  const auto shapes = args.get_word_list("shapes", "2048x2048,8192x2048");
  const int64_t rounds = args.get_int("rounds", 5, cli::IntRange{1, 1000});
  args.finish();
  for (const std::string& type_name : types) {
    const WeightType type = parse_weight_type(type_name);
    for (const std::string& shape_text : shapes) {
      const Shape s = parse_shape(shape_text);
      const auto bytes = make_bench_weights(type, s.rows, s.cols);
      const int64_t copies = copies_for(static_cast<int64_t>(bytes.size()));
      const std::vector<std::vector<uint8_t>> matrices(copies, bytes);
      // the Ns in turn, --rounds times, each N's best call over all rounds (the shared machine's
      // busy spells fall on different Ns each round)
      std::vector<double> best(rows.size(), 1e30);
      for (int64_t round = 0; round < rounds; ++round)
        for (size_t k = 0; k < rows.size(); ++k) {
          const int64_t N = rows[k];
          std::vector<float> x(N * s.cols), y(N * s.rows);
          Rng rng(3);
          for (auto& v : x) v = static_cast<float>(rng.uniform(-1, 1));
          int64_t next = 0;
          const Timing t = measure(
              [&] {
                matmul({type, matrices[next].data(), s.rows, s.cols}, x.data(), y.data(), N, false, order);
                next = (next + 1) % copies;
              },
              0.2);
          best[k] = std::min(best[k], t.best_ms);
        }
      for (size_t k = 0; k < rows.size(); ++k) {
        const double rows_per_s = rows[k] / (best[k] * 1e-3), single = 1 / (best[0] * 1e-3) * rows[0];
        print_row(json, {str("op", "matmul"), str("order", order_name), str("type", weight_type_name(type)),
                         str("shape", shape_text), num("N", rows[k], 0), num("ms", best[k], 3),
                         num("rows_per_s", rows_per_s, 0), num("vs_first", rows_per_s / single, 2),
                         num("gbps", bytes.size() / (best[k] * 1e-3) / 1e9, 1)});
      }
    }
  }
  return 0;
}

}  // namespace difftx::bench
