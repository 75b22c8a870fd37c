// `difftx bench TARGET`: operator and end-to-end benchmarks (code in bench/).
#include "benches.h"
#include "cli/command.h"

namespace difftx::cli {

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
               "  difftx bench infer --model DIR [--model DIR ...] [--prompt 512] [--new 128] [--repeats N] [--device D]\n"
               "                     [--dtype q4_0]  the matrices converted in memory as `convert --dtype` plans them\n"
               "                     [--prompt-file FILE] [--draft ngram|DIR [--draft-tokens 6]]  each model also\n"
               "                     with the draft (speculative decoding): decode tok/s, speed-up, acceptance\n"
               "  difftx bench serve --model DIR [--device D] [--concurrency 1,4,16,64] [--prompt 128] [--new 64]\n"
               "                     [--shared-prefix N] [--kv-dtype bf16] [--max-batch-tokens 512] [--json]\n"
               "                     [--json-schema FILE --tokenizer NAME [--pairs 2]]  every stream constrained too\n"
               "                     [--draft ngram|DIR [--draft-tokens 6]]  every run again with the draft\n"
               "                    [--kv-dtype f32|bf16|int8] [--json]\n"
               "                                              prefill and decode tokens/s per variant\n"
               "  difftx bench analysis [--json]              quantized-logit attention vs fused; outlier statistics rates\n"
               "  difftx bench quant [--json] [--quick] [--types f32,bf16,f16,q8_0,q4_0,q4_k] [--prefill-rows 512]\n"
               "                                              weight types at 1B shapes: decode GEMV GB/s vs copy, prefill GFLOPS\n"
               "  difftx bench memory [--json]                parallel memcpy and read GB/s (the bandwidth limit's denominator)\n"
               "  difftx bench matmul [--json] [--order gemv|gemm|by_size] [--rows 1,4,16,64] [--types q4_0,q8_0,bf16] [--sgemm]\n"
               "                      [--shapes 2048x2048,8192x2048] [--rounds 5] [--panels]\n"
               "                                              one matmul order at N rows of x: rows/s and its ratio to the first N\n"
               "  difftx bench vulkan [--device vulkan[:N]] [--config FILE] [--types f16,q8_0,q4_0,q4_k] [--rows 1]\n"
               "                      [--prompt 512] [--context 4096,...] [--rounds 3] [--copy-mib 1024] [--copy-only] [--json]\n"
               "                                              the Vulkan kernels at a model's shapes, timed on the device,\n"
               "                                              beside its copy rate",
               run_targets("bench", {{"gemm", bench::bench_gemm},
                                     {"attn", bench::bench_attn},
                                     {"tokenizer", bench::bench_tokenizer},
                                     {"ops", bench::bench_ops},
                                     {"train", bench::bench_train},
                                     {"infer", bench::bench_infer},
                                     {"serve", bench::bench_serve},
                                     {"analysis", bench::bench_analysis},
                                     {"quant", bench::bench_quant},
                                     {"memory", bench::bench_memory},
                                     {"matmul", bench::bench_matmul},
                                     {"vulkan", bench::bench_vulkan}}));

}  // namespace difftx::cli
