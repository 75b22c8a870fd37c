// `difftx train` inside an embedding program: one rank, in this process, with the program's
// per-step callback (TrainOptions::on_step) and progress lines (TrainOptions::report).
#pragma once
#include "train/trainer.h"

namespace difftx::api {

// o.config_path empty: init_dir's config.json (a run that starts from a model's weights). Errors
// as train()'s; a callback that returns false ends the run after a checkpoint of that step.
train::TrainSummary train_in_process(train::TrainOptions o);

}  // namespace difftx::api
