// `difftx bench quant`: the inference weight types (src/kernels/quant) at the Llama-3.2-1B
// shapes. Decode (N = 1) is a GEMV that reads every weight once, so its figure is GB/s of weight
// bytes, set against two memory rates of the same run: a parallel memcpy (bytes moved, half read
// and half written, as `bench ops` counts) and a parallel sum (bytes read). Prefill (N rows of
// x, default 512) is a GEMM: GFLOPS = 2 N rows cols / time, beside the F32 weights' rate (sgemm).
// cpu_ms is the least process CPU time of a call: with OMP_NUM_THREADS=1, the time of a call
// that the shared machine did not interrupt (with more threads it also counts spinning).
// rel_err is each kernel's own error (relative_error below), not that of the weights' quantization.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "benches.h"
#include "core/rng.h"
#include "kernels/quant/matmul.h"
#include "kernels/quant/quantize.h"
#include "measure.h"

namespace difftx::bench {

using kernels::MatmulPath;

namespace {

constexpr int64_t kDistinctRows = 64;  // a big matrix repeats this many quantized random rows
// The memory rates: a buffer of kMemoryBytes walked in pieces of kPieceBytes (past the L3, short
// enough that the best of many calls is one the shared machine did not interrupt, like the
// GEMVs they are compared with).
constexpr int64_t kMemoryBytes = int64_t{1} << 29, kPieceBytes = int64_t{1} << 26;

struct MemoryRates {
  double copy_gbps, read_gbps;
};

MemoryRates measure_memory() {
  const int64_t n = kMemoryBytes / 4, piece = kPieceBytes / 4, chunk = int64_t{16} << 10;
  std::vector<float> src(n, 1.0f), dst(n);
  int64_t next = 0;
  const Timing copy = measure([&] {
    const int64_t begin = next * piece;
#pragma omp parallel for schedule(static)
    for (int64_t i = begin; i < begin + piece; i += chunk) std::memcpy(&dst[i], &src[i], chunk * sizeof(float));
    next = (next + 1) % (n / piece);
  });
  // integer sums vectorise without reassociating floats
  const auto* words = reinterpret_cast<const uint64_t*>(src.data());
  uint64_t sink = 0;
  const Timing read = measure([&] {
    const int64_t begin = next * piece / 2;
    uint64_t total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (int64_t i = begin; i < begin + piece / 2; ++i) total += words[i];
    sink += total;
    next = (next + 1) % (n / piece);
  });
  if (sink == 42) std::printf(" ");  // keep the sum alive
  return {2.0 * kPieceBytes / (copy.best_ms * 1e-3) / 1e9, kPieceBytes / (read.best_ms * 1e-3) / 1e9};
}

// Times fn like measure() and also returns the least process CPU time of one call: with one
// thread, the call's time when the shared machine did not interrupt it.
struct Timed {
  Timing wall;
  double cpu_ms;
};
Timed measure_with_cpu(const std::function<void()>& fn, double seconds = 0.5, int runs = 3) {
  double least = 1e30;
  const Timing wall = measure(
      [&] {
        const double start = process_cpu_seconds();
        fn();
        least = std::min(least, (process_cpu_seconds() - start) * 1e3);
      },
      seconds, runs);
  return {wall, least};
}

// The RMS of y - exact over the RMS of exact, exact being the float64 product of x's N rows with
// the matrix's first min(rows, kDistinctRows) rows as stored (dequantized; the rest repeat
// them): what a kernel's own arithmetic adds (x rounded to int8, F32 sums), not the error of
// quantizing the weights, which is the same for every kernel of a type.
double relative_error(const kernels::WeightMatrix& W, const float* x, const float* y, int64_t N) {
  const int64_t rows = std::min(W.rows, kDistinctRows);
  std::vector<float> w(rows * W.cols);
  backends::cpu::kernels().dequantize_rows(W.type, W.data, w.data(), rows, W.cols);
  double error = 0, total = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t r = 0; r < rows; ++r) {
      double exact = 0;
      for (int64_t i = 0; i < W.cols; ++i) exact += static_cast<double>(w[r * W.cols + i]) * x[n * W.cols + i];
      const double diff = y[n * W.rows + r] - exact;
      error += diff * diff, total += exact * exact;
    }
  return total > 0 ? std::sqrt(error / total) : 0.0;
}

struct Shape {
  int64_t rows, cols;
  bool prefill;  // the output head (128256 rows) is timed for decode only
};

void bench_shape(bool json, kernels::WeightType type, const Shape& s, int64_t N, const MemoryRates& memory) {
  const auto bytes = make_bench_weights(type, s.rows, s.cols);
  const int64_t copies = copies_for(static_cast<int64_t>(bytes.size()));
  std::vector<std::vector<uint8_t>> matrices(copies, bytes);
  const std::string shape = std::to_string(s.rows) + "x" + std::to_string(s.cols);
  std::vector<float> x(N * s.cols), y(N * s.rows);
  Rng rng(3);
  for (auto& v : x) v = static_cast<float>(rng.uniform(-1, 1));
  // The block types have two decode kernels: weights widened to F32, and x quantized to int8
  std::vector<std::pair<MatmulPath, const char*>> paths = {{MatmulPath::best, "f32_fma"}};
  if (kernels::weight_type_info(type).is_block())
    paths = {{MatmulPath::simd, "f32_fma"}, {MatmulPath::simd_int8, "int8"}};
  for (auto [path, path_name] : paths) {
    int64_t next = 0;
    const Timed gemv = measure_with_cpu([&] {
      backends::cpu::kernels().matmul_by_path({type, matrices[next].data(), s.rows, s.cols}, x.data(), y.data(), 1, false, path);
      next = (next + 1) % copies;
    });
    const double gbps = static_cast<double>(bytes.size()) / (gemv.wall.best_ms * 1e-3) / 1e9;
    const double error = relative_error({type, bytes.data(), s.rows, s.cols}, x.data(), y.data(), 1);
    print_row(json, {str("op", "quant_gemv"), str("type", kernels::weight_type_name(type)), str("path", path_name),
                     str("shape", shape), num("mbytes", bytes.size() / 1e6, 1), num("ms", gemv.wall.best_ms, 3),
                     num("cpu_ms", gemv.cpu_ms, 3), num("gbps", gbps, 1), num("of_copy", gbps / memory.copy_gbps, 2),
                     num("of_read", gbps / memory.read_gbps, 2), num("rel_err", error, 7)});
  }
  if (!s.prefill || N <= 1) return;
  // prefill: the block types have int8 panels beside widening to F32 for sgemm
  const kernels::WeightMatrix W{type, bytes.data(), s.rows, s.cols};
  for (const auto& entry : paths) {
    const MatmulPath path = entry.first;
    const char* name = path == MatmulPath::simd_int8 ? "int8" : "f32_sgemm";
    const Timed gemm = measure_with_cpu([&] { backends::cpu::kernels().matmul_by_path(W, x.data(), y.data(), N, false, path); }, 0.5, 2);
    const double flops = 2.0 * N * s.rows * s.cols;
    print_row(json, {str("op", "quant_prefill"), str("type", kernels::weight_type_name(type)), str("path", name),
                     str("shape", shape), num("N", N, 0), num("ms", gemm.wall.best_ms, 1),
                     num("gflops", flops / (gemm.wall.best_ms * 1e-3) / 1e9, 1), num("cpu_ms", gemm.cpu_ms, 1),
                     num("cpu_gflops", flops / (gemm.cpu_ms * 1e-3) / 1e9, 1),
                     num("rel_err", relative_error(W, x.data(), y.data(), N), 7)});
  }
}

}  // namespace

// rows x cols weights of `type`: kDistinctRows random rows quantized, then repeated.
std::vector<uint8_t> make_bench_weights(kernels::WeightType type, int64_t rows, int64_t cols) {
  const int64_t row_bytes = kernels::weight_row_bytes(type, cols), distinct = std::min(rows, kDistinctRows);
  std::vector<float> source(distinct * cols);
  Rng rng(7);
  for (auto& v : source) v = static_cast<float>(rng.uniform(-0.05, 0.05));
  std::vector<uint8_t> bytes(kernels::weight_matrix_bytes(type, rows, cols));
  backends::cpu::kernels().quantize_rows(type, source.data(), bytes.data(), distinct, cols);
  for (int64_t r = distinct; r < rows; ++r)
    std::memcpy(bytes.data() + r * row_bytes, bytes.data() + (r % distinct) * row_bytes, row_bytes);
  return bytes;
}

// Enough copies of a matrix that a GEMV over each in turn streams from DRAM, not the 32 MiB L3.
int64_t copies_for(int64_t bytes) { return std::max<int64_t>(1, (int64_t{256} << 20) / std::max<int64_t>(bytes, 1)); }

int bench_memory(cli::Args& args) {
  const bool json = args.flag("json");
  args.finish();
  const MemoryRates memory = measure_memory();
  print_row(json, {str("op", "memory"), num("copy_gbps", memory.copy_gbps, 1), num("read_gbps", memory.read_gbps, 1),
                   num("mbytes", kPieceBytes / 1e6, 0)});
  return 0;
}

int bench_quant(cli::Args& args) {
  const bool json = args.flag("json"), quick = args.flag("quick");
  const int64_t N = args.get_int("prefill-rows", 512, cli::IntRange{8, 8192});
  const auto types = args.get_word_list("types", "f32,bf16,f16,q8_0,q4_0,q4_k");
  args.finish();
  const MemoryRates memory = measure_memory();
  print_row(json, {str("op", "memory"), num("copy_gbps", memory.copy_gbps, 1), num("read_gbps", memory.read_gbps, 1),
                   num("mbytes", kPieceBytes / 1e6, 0)});
  std::vector<Shape> shapes = {{2048, 2048, true}, {8192, 2048, true}, {2048, 8192, true}, {128256, 2048, false}};
  if (quick) shapes = {{2048, 2048, true}, {8192, 2048, true}};
  for (const std::string& name : types) {
    const kernels::WeightType type = kernels::parse_weight_type(name);
    for (const Shape& s : shapes) bench_shape(json, type, s, N, memory);
  }
  return 0;
}

}  // namespace difftx::bench
