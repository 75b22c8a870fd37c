// The defaults of `difftx experiment compare` (and the training defaults the sweep starts from):
// what a comparison trains with and measures unless told otherwise, the answer-only NIAH recipe
// of docs/EXPERIMENTS.md, and the analysis settings that follow from the others. Every value is
// a default: the command's flags override each one.
#pragma once
#include <cstdint>
#include <filesystem>

#include "experiment/compare.h"

namespace difftx::experiment {

// configs/ of the working directory, else the source tree's.
std::filesystem::path default_configs_dir();

// Training: sequences of 256 in micro-batches of 8, a retrieval mixture, validation and
// checkpoints often enough for curves and resuming.
train::TrainOptions compare_train_defaults();

// compare_train_defaults() and the analysis grid: NIAH at 256 tokens with 1, 2 or 4 needles,
// MQAR episodes of 8 pairs, 4 attention prompts per depth, 16384 outlier tokens, the
// quantization sweep at 0, 16, 8, 6 and 4 bits.
CompareOptions compare_defaults();

// The answer-only NIAH recipe ("Recipe and results: NIAH learnt from the mixture") at the
// context seq_len: the retrieval preset, half of the rows NIAH and a fifth MQAR, a constant
// learning rate, 2048 tokens a step, NIAH graded at the training context with one or two
// needles. Returns the recipe's training tokens (3000 steps).
int64_t apply_niah_recipe(CompareOptions& o, int64_t seq_len);

// What follows from the other settings: the analyses' seeds are the training seed, the
// quantization sweep grades the first needle count with one queried needle, the attention
// prompts take NIAH's first context and its depths, and the val windows are the training's.
void derive_analysis_options(CompareOptions& o);

}  // namespace difftx::experiment
