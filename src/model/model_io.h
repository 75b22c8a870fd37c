// Model directories: config.json + safetensors weights (+ tokenizer files). config.json's
// model_type picks the format adapter (src/model/formats/): "difftx" (docs/MODEL.md §3), or
// Hugging Face's "llama" and "diffllama" (docs/FORMATS.md).
#pragma once
#include <filesystem>

#include "io/safetensors.h"
#include "model/model.h"

namespace difftx {

// Loads config.json and every tensor, converting F16/BF16 to float. Errors name the directory,
// the file and the tensor: a missing or misshapen tensor, or a tensor the config does not call for.
Model load_model_dir(const std::filesystem::path& dir);
// Writes difftx's own format (config.json and model.safetensors, F32), each atomically.
void save_model_dir(const Model& model, const std::filesystem::path& dir);

}  // namespace difftx
