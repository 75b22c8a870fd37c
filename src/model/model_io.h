// Model directories (SPEC §3): config.json + model.safetensors (+ tokenizer files).
#pragma once
#include <filesystem>

#include "model/model.h"

namespace difftx {

// Loads config.json and every tensor of model.safetensors, converting F16/BF16 to float.
// Errors name the directory, the file and the tensor: a missing or misshapen tensor, or a
// tensor the config does not call for.
Model load_model_dir(const std::filesystem::path& dir);
// Writes config.json and model.safetensors (F32) into dir, each atomically.
void save_model_dir(const Model& model, const std::filesystem::path& dir);

}  // namespace difftx
