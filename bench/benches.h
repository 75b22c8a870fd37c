// The benchmarks behind `difftx bench TARGET`, one file each in this folder.
#pragma once
#include <cstdint>

#include <vector>

#include "cli/args.h"
#include "kernels/quant/weight_type.h"

namespace difftx::bench {

int bench_gemm(cli::Args& args);
int bench_attn(cli::Args& args);
int bench_tokenizer(cli::Args& args);
int bench_ops(cli::Args& args);
int bench_train(cli::Args& args);
int bench_infer(cli::Args& args);
int bench_serve(cli::Args& args);  // many streams on one engine
int bench_analysis(cli::Args& args);
int bench_quant(cli::Args& args);
int bench_memory(cli::Args& args);  // in quant_bench.cpp: the memory rates its rows are set against
int bench_matmul(cli::Args& args);
int bench_vulkan(cli::Args& args);  // the Vulkan backend's kernels, timed on the device

// In quant_bench.cpp: rows x cols weights of `type` (a few random rows quantized, then repeated),
// and how many copies of `bytes` a GEMV must walk in turn to stream from DRAM, not the L3.
std::vector<uint8_t> make_bench_weights(kernels::WeightType type, int64_t rows, int64_t cols);
int64_t copies_for(int64_t bytes);

}  // namespace difftx::bench
