// `difftx bench matmul`: one matmul order (MatmulOrder) at N = --rows rows of x, the engine's
// batched steps. Each call walks a different copy of the weights (copies_for: DRAM, not the L3),
// as a decode step does. Figures: rows of x per second and its ratio to N = 1 of the same run
// (what batching N sequences buys at that order), weight GB/s.
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
  args.finish();
  for (const std::string& type_name : types) {
    const WeightType type = parse_weight_type(type_name);
    for (const std::string& shape_text : shapes) {
      const Shape s = parse_shape(shape_text);
      const auto bytes = make_bench_weights(type, s.rows, s.cols);
      const int64_t copies = copies_for(static_cast<int64_t>(bytes.size()));
      const std::vector<std::vector<uint8_t>> matrices(copies, bytes);
      double single = 0;  // rows/s at N = 1
      for (int64_t N : rows) {
        std::vector<float> x(N * s.cols), y(N * s.rows);
        Rng rng(3);
        for (auto& v : x) v = static_cast<float>(rng.uniform(-1, 1));
        int64_t next = 0;
        const Timing t = measure([&] {
          matmul({type, matrices[next].data(), s.rows, s.cols}, x.data(), y.data(), N, false, order);
          next = (next + 1) % copies;
        });
        const double rows_per_s = N / (t.best_ms * 1e-3);
        if (N == 1) single = rows_per_s;
        print_row(json, {str("op", "matmul"), str("order", order_name), str("type", weight_type_name(type)),
                         str("shape", shape_text), num("N", N, 0), num("ms", t.best_ms, 3),
                         num("rows_per_s", rows_per_s, 0), num("vs_N1", single > 0 ? rows_per_s / single : 0, 2),
                         num("gbps", bytes.size() / (t.best_ms * 1e-3) / 1e9, 1)});
      }
    }
  }
  return 0;
}

}  // namespace difftx::bench
