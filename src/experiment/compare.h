// `difftx experiment compare`: the paper's comparison at CPU scale. Trains each variant of a
// preset (configs/<preset>/<variant>.json: baseline, diff, diff2 at equal parameters) for the
// same tokens on the same data with the same seed, so that the only difference is the model;
// runs every analysis (model_analyses.h) on each; writes results.json and the report.
//
// OUT holds runs/<variant>/ (a `difftx train` run directory each; with several seeds
// runs/<variant>/seed_<s>/) and the report (results.json, the charts, index.html). A compare that
// is stopped can be started again with the same arguments: each run resumes from its latest
// checkpoint, a finished run is not trained again, and a finished run whose results results.json
// already holds is not analysed again either.
//
// Several seeds (docs/EXPERIMENTS.md "Several seeds"): each variant is trained once per seed (the
// seed sets initialisation and data order, the same for every variant), the analyses use the same
// evaluation sets for every run, and results.json adds the statistics of results/statistics.h.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "experiment/model_analyses.h"
#include "results/results.h"
#include "train/trainer.h"

namespace difftx::experiment {

struct CompareOptions {
  std::filesystem::path configs_dir;  // holds <preset>/<variant>.json
  std::string preset = "small";
  std::vector<std::string> variants = {"baseline", "diff", "diff2"};
  std::filesystem::path data_dir, out_dir;
  int64_t tokens = 0;  // training tokens per model, rounded up to whole optimizer steps
  std::vector<int64_t> seeds;  // empty: one run per variant with train.seed
  train::TrainOptions train;  // shared by every model; config, data, run directory and steps are set per model
  AnalysisOptions analysis;
  bool analyse = true;  // false: train only, the results hold each run's training record (the sweep)
  // An earlier compare's OUT: each run starts from the last checkpoint of the same variant and
  // seed there (train --init; a context curriculum's second stage). Empty: random initialisation.
  std::filesystem::path init_from;
};

// Writes OUT/results.json (after every model) and the report, and returns the results. `log` gets the lines between the trainer's own. Errors
// (before any training): tokens < 1, no or repeated variants, a missing config (naming the
// presets there are), a data directory that is not a prepared dataset.
results::ExperimentResults run_compare(const CompareOptions& options, const std::function<void(const std::string&)>& log);

}  // namespace difftx::experiment
