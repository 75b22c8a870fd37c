// Model directories: config.json + safetensors weights (+ tokenizer files). config.json's
// model_type picks the format adapter (src/model/formats/): "difftx" (docs/MODEL.md §3), or
// Hugging Face's "llama" and "diffllama" (docs/FORMATS.md).
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "io/safetensors.h"
#include "model/formats/stored_model.h"
#include "model/model.h"

namespace difftx::model {

// A parsed config.json of any format model_type names (difftx, llama, diffllama) as difftx's
// ModelConfig; `where` names the file in errors.
ModelConfig model_config_from_json(const nlohmann::json& config, const std::string& where);

// Opens a model directory of any format for reading tensor by tensor: config.json parsed and
// every tensor's presence, dtype and shape checked against it (the errors load_model_dir gives),
// no weight read. A WeightSource for the writers (`difftx convert` streams through it).
std::unique_ptr<StoredModel> open_model_dir(const std::filesystem::path& dir);

// Loads config.json and every tensor: vectors as F32, matrices widened to F32 or kept in the type
// the file stores them in (precision; stored_matrices.h). Errors name the directory, the file and
// the tensor: a missing or misshapen tensor, a tensor the config does not call for, a non-finite
// weight.
Model load_model_dir(const std::filesystem::path& dir, MatrixPrecision precision = MatrixPrecision::f32);
// Writes difftx's own format (config.json and model.safetensors; F32 unless matrices are packed),
// each atomically.
void save_model_dir(const Model& model, const std::filesystem::path& dir);

}  // namespace difftx::model
