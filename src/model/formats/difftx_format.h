// difftx's own model directory (docs/FORMATS.md "Model directories"): config.json with
// model_type "difftx" and the weights under the names of docs/MODEL.md §3, in one
// model.safetensors or sharded, each matrix in its storage type (stored_matrices.h). No
// permutation: the arena's layout is the file's.
#pragma once
#include <filesystem>
#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "io/safetensors.h"
#include "model/formats/stored_model.h"
#include "model/model.h"
#include "model/weight_source.h"

namespace difftx::model {

// Opens the directory and checks every tensor's presence, dtype and shape (no weight is read).
std::unique_ptr<StoredModel> open_difftx_model(const std::filesystem::path& dir, const nlohmann::json& config);
// Writes config.json and model.safetensors, each atomically: the F32 tensors stored as `stored`
// says, packed matrices as they are held.
void save_difftx_model(const Model& model, const std::filesystem::path& dir,
                       io::StoredFloat stored = io::StoredFloat::f32);
// The same from a source read one tensor at a time, the matrices `types` names converted to those
// types (model/storage_plan.h): the bytes save_difftx_model(convert_matrices(model, types)) writes,
// holding one tensor (widened and converted) in memory at a time.
void save_difftx_model(const WeightSource& source, const MatrixTypes& types, const std::filesystem::path& dir,
                       io::StoredFloat stored = io::StoredFloat::f32);

}  // namespace difftx::model
