// Targets of `difftx experiment` (one file each: experiment_<target>.cpp).
#pragma once
#include "cli/args.h"

namespace difftx::cli {

int experiment_report(Args& args);

}  // namespace difftx::cli
