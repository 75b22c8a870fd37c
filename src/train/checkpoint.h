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
#include "train/optimizer.h"

namespace difftx {

struct CheckpointContents {
  nlohmann::json state;  // step, loader position, anything the trainer needs to resume
};

// Writes the checkpoint of `step` and points `latest` at it; keeps the newest `keep` (>= 1).
// extra_files are copied in (tokenizer files, so the checkpoint is self-contained).
std::filesystem::path save_checkpoint(const std::filesystem::path& run_dir, int64_t step, const Model& model,
                                      AdamW& optimizer, const nlohmann::json& state,
                                      const std::vector<std::filesystem::path>& extra_files, int keep);

// The newest complete checkpoint of a run, if any.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& run_dir);

// Loads weights and optimizer moments into `model` and `optimizer` (whose config must match the
// checkpoint's config.json: an Error names the differing key) and returns state.json.
nlohmann::json load_checkpoint(const std::filesystem::path& checkpoint, Model& model, AdamW& optimizer);

}  // namespace difftx
