// The "train" object of results.json (docs/EXPERIMENTS.md, results/results.h) read back from a
// run directory's metrics.jsonl, so that a run trained earlier (or resumed after a kill) reports
// the same as one trained just now: the train-loss curve (thinned to at most max_points,
// always keeping the last step), the val-loss curve, tokens, seconds of training steps and
// tokens/s over them, the final train and val losses.
#pragma once
#include <cstdint>
#include <filesystem>

#include "results/results.h"

namespace difftx::experiment {

// tokens_per_step: tokens of one optimizer step (the run's batch). Errors: a missing or
// malformed metrics.jsonl (naming the line), a run without any step.
results::TrainResults train_record(const std::filesystem::path& run_dir, int64_t tokens_per_step,
                                   int64_t max_points = 400);

}  // namespace difftx::experiment
