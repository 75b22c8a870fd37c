// difftx's own model directory (docs/FORMATS.md "Model directories"): config.json with
// model_type "difftx" and the weights under the names of docs/MODEL.md §3, in one
// model.safetensors or sharded, each matrix in its storage type (stored_matrices.h). No
// permutation: the arena's layout is the file's.
#pragma once
#include <filesystem>

#include <nlohmann/json_fwd.hpp>

#include "io/safetensors.h"
#include "model/formats/stored_matrices.h"
#include "model/model.h"

namespace difftx {

Model load_difftx_model(const std::filesystem::path& dir, const nlohmann::json& config, MatrixPrecision precision);
// Writes config.json and model.safetensors, each atomically: the F32 tensors stored as `stored`
// says, packed matrices as they are held.
void save_difftx_model(const Model& model, const std::filesystem::path& dir, StoredFloat stored = StoredFloat::f32);

}  // namespace difftx
