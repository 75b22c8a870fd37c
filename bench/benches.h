// The benchmarks behind `difftx bench TARGET`, one file each in this folder.
#pragma once
#include <cstdint>

#include "cli/args.h"

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

}  // namespace difftx::bench
