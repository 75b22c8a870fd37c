// Model directories: config.json + safetensors weights (+ tokenizer files). config.json's
// model_type picks the format adapter (src/model/formats/): "difftx" (docs/MODEL.md §3), or
// Hugging Face's "llama" and "diffllama" (docs/FORMATS.md).
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "io/safetensors.h"
#include "model/model.h"

namespace difftx {

// A parsed config.json of any format model_type names (difftx, llama, diffllama) as difftx's
// ModelConfig; `where` names the file in errors.
ModelConfig model_config_from_json(const nlohmann::json& config, const std::string& where);

// Loads config.json and every tensor, converting F16/BF16 to float. Errors name the directory,
// the file and the tensor: a missing or misshapen tensor, or a tensor the config does not call for.
Model load_model_dir(const std::filesystem::path& dir);
// Writes difftx's own format (config.json and model.safetensors, F32), each atomically.
void save_model_dir(const Model& model, const std::filesystem::path& dir);

}  // namespace difftx
