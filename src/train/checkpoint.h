// Training checkpoints. Each is a model directory (config.json + model.safetensors, so every
// model command can load it) plus optimizer.safetensors (AdamW moments) and state.json (step,
// data position, options), under RUN_DIR/checkpoints/step_NNNNNNNN. A checkpoint is written
// into a temporary directory and renamed into place, and RUN_DIR/checkpoints/latest names the
// newest complete one, so a kill at any moment leaves the previous checkpoint usable.
#pragma once
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "model/model.h"

namespace difftx::train {

// AdamW's moments, laid out like the weights arena (all of them, also when each rank of a
// data-parallel run owns only a part), and the optimizer steps taken.
struct OptimizerMoments {
  float* m = nullptr;
  float* v = nullptr;
  int64_t steps_taken = 0;
};

// Writes the checkpoint of `step` and points `latest` at it; keeps the newest `keep` (>= 1).
// `state` is state.json (loader position, anything the trainer needs to resume; "step" is
// added). extra_files are copied in (tokenizer files, so the checkpoint is self-contained).
std::filesystem::path save_checkpoint(const std::filesystem::path& run_dir, int64_t step, const model::Model& model,
                                      const OptimizerMoments& moments, const nlohmann::json& state,
                                      const std::vector<std::filesystem::path>& extra_files, int keep);

// The step a checkpoint directory's name gives ("step_00000100" -> 100), or -1.
int64_t step_of_name(const std::string& name);

// The newest complete checkpoint of a run, if any.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& run_dir);

// Loads the weights into `model` (whose config must match the checkpoint's config.json: an
// Error names the differing key) and the moments into `moments` (m and v must point to arenas
// laid out like the weights) and returns state.json.
nlohmann::json load_checkpoint(const std::filesystem::path& checkpoint, model::Model& model, OptimizerMoments& moments);

}  // namespace difftx::train
