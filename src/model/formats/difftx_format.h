// difftx's own model directory (docs/FORMATS.md "Model directories"): config.json with
// model_type "difftx" and the weights under the names of docs/MODEL.md §3, in one
// model.safetensors or sharded. No permutation: the arena's layout is the file's.
#pragma once
#include <filesystem>

#include <nlohmann/json_fwd.hpp>

#include "io/safetensors.h"
#include "model/model.h"

namespace difftx {

Model load_difftx_model(const std::filesystem::path& dir, const nlohmann::json& config);
// Writes config.json and model.safetensors, each atomically.
void save_difftx_model(const Model& model, const std::filesystem::path& dir, StoredFloat stored = StoredFloat::f32);

}  // namespace difftx
