// The benchmarks behind `difftx bench TARGET`, one file each in this folder.
#pragma once
#include <cstdint>

#include "cli/args.h"

namespace difftx::bench {

int bench_gemm(cli::Args& args);
// sgemm GFLOPS at n x n x n, the in-run yardstick for MFU-style ratios.
double sgemm_gflops(int64_t n, double min_seconds = 0.5);

}  // namespace difftx::bench
