// The benchmarks behind `difftx bench TARGET`, one file each in this folder.
#pragma once
#include <cstdint>

#include "cli/args.h"

namespace difftx::bench {

int bench_gemm(cli::Args& args);

}  // namespace difftx::bench
