// Targets of `difftx experiment` (one file each: experiment_<target>.cpp).
#pragma once
#include <string>

#include "cli/args.h"

namespace difftx::cli {

int experiment_report(Args& args);
int experiment_compare(Args& args);
std::string experiment_compare_help();  // its --help lines
int experiment_sweep(Args& args);
std::string experiment_sweep_help();

}  // namespace difftx::cli
