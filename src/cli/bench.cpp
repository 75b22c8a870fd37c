// `difftx bench TARGET`: operator and end-to-end benchmarks (code in bench/).
#include <map>

#include "benches.h"
#include "cli/command.h"
#include "core/error.h"

namespace difftx::cli {
namespace {

const std::map<std::string, int (*)(Args&)>& targets() {
  static const std::map<std::string, int (*)(Args&)> t = {
      {"gemm", bench::bench_gemm},
      {"attn", bench::bench_attn},
      {"tokenizer", bench::bench_tokenizer},
      {"ops", bench::bench_ops},
      {"train", bench::bench_train},
      {"infer", bench::bench_infer},
      {"analysis", bench::bench_analysis},
      {"quant", bench::bench_quant},
  };
  return t;
}

int run_bench(Args& args) {
  const auto target = args.take_positional();
  DIFFTX_CHECK(target.has_value(), "bench: name a target (see difftx bench --help)");
  auto it = targets().find(*target);
  DIFFTX_CHECK(it != targets().end(), "bench: unknown target '", *target, "'");
  return it->second(args);
}

}  // namespace

DIFFTX_COMMAND("bench", "operator and end-to-end benchmarks",
               "  difftx bench gemm [--json]                  sgemm GFLOPS and the OpenBLAS kernel in use\n"
               "  difftx bench attn [--json] [--quick]        fused attention forward/backward per variant\n"
               "  difftx bench ops [--json]                   GB/s of the fused decoder ops (norm, RoPE, ...)\n"
               "  difftx bench tokenizer [--json]             encode/decode MB/s, BPE training, loader\n"
               "  difftx bench train [--json] [--quick] [--profile] [--preset P] [--seq-len T] [--micro-batch B]\n"
               "                     [--variants baseline,diff,diff2] [--rounds N] [--no-torch | --torch-threads 1,2]\n"
               "                                              training step per variant vs sgemm and PyTorch;\n"
               "                                              (B defaults to 4096/T); --profile adds each phase's time\n"
               "                                              in the best step and its best over the rounds\n"
               "  difftx bench infer [--json] [--quick] [--preset small,base] [--contexts 512,4096] [--repeats N]\n"
               "                                              prefill and decode tokens/s per variant\n"
               "  difftx bench analysis [--json]              quantized-logit attention vs fused; outlier statistics rates\n"
               "  difftx bench quant [--json] [--quick] [--types f32,bf16,f16,q8_0,q4_0,q4_k] [--prefill-rows 512]\n"
               "                                              weight types at 1B shapes: decode GEMV GB/s vs copy, prefill GFLOPS",
               run_bench);

}  // namespace difftx::cli
