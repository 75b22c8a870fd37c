// The training options `difftx train` and `difftx experiment compare` share: hyperparameters,
// data order, the retrieval mixture, evaluation and checkpoint cadence (not the config, data or
// run directory, which each command names in its own way).
#pragma once
#include "cli/args.h"
#include "train/trainer.h"

namespace difftx::cli {

// Reads the options into o, keeping o's values as the defaults.
void read_train_options(Args& args, train::TrainOptions& o);

// The --help lines of those options, given the defaults in o.
std::string train_options_help(const train::TrainOptions& o);

}  // namespace difftx::cli
