// Targets of `difftx experiment` (one file each: experiment_<target>.cpp).
#pragma once
#include <filesystem>
#include <string>

#include "cli/args.h"
#include "train/trainer.h"

namespace difftx::cli {

int experiment_report(Args& args);
int experiment_compare(Args& args);
std::string experiment_compare_help();  // its --help lines
int experiment_sweep(Args& args);
std::string experiment_sweep_help();

// Shared by compare and sweep: configs/ of the working directory, else the source tree's; the
// training defaults (sequences of 256 in micro-batches of 8, a retrieval mixture, validation
// and checkpoints often enough for curves and resuming).
std::filesystem::path default_configs_dir();
TrainOptions experiment_train_defaults();

}  // namespace difftx::cli
