#include "model/model_io.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "io/safetensors_set.h"
#include "model/formats/difftx_format.h"
#include "model/formats/hf_config.h"
#include "model/formats/hf_format.h"
#include "model/finite_weights.h"

namespace difftx::model {

namespace {

// The format config.json's model_type names: true for Hugging Face's, false for difftx's own
// (whose parser reports a missing model_type).
bool is_hf_format(const nlohmann::json& config, const std::string& where) {
  const nlohmann::json* type = config.is_object() && config.contains("model_type") ? &config.at("model_type") : nullptr;
  const std::string model_type = type && type->is_string() ? type->get<std::string>() : "";
  HfArchitecture hf;
  if (hf_architecture_of(model_type, &hf)) return true;
  DIFFTX_CHECK(!type || model_type == "difftx", where, ": model_type ", type->dump().substr(0, 64),
               " is not one difftx reads (\"difftx\", \"llama\", \"diffllama\", \"Motif\", \"motif\", \"phi4flash\")");
  return false;
}

}  // namespace

ModelConfig model_config_from_json(const nlohmann::json& config, const std::string& where) {
  return is_hf_format(config, where) ? config_from_hf(config, where).model : config_from_json(config, where);
}

std::unique_ptr<StoredModel> open_model_dir(const std::filesystem::path& dir) {
  io::require_directory(dir, "model directory");
  const auto config_path = dir / "config.json";
  DIFFTX_CHECK(std::filesystem::exists(config_path), dir.string(), ": no config.json in the model directory");
  const nlohmann::json config = io::read_json_file(config_path);
  return is_hf_format(config, config_path.string()) ? open_hf_model(dir, config) : open_difftx_model(dir, config);
}

Model load_model_dir(const std::filesystem::path& dir, MatrixPrecision precision) {
  const std::unique_ptr<StoredModel> stored = open_model_dir(dir);
  Model model(stored->config(), precision == MatrixPrecision::as_stored ? stored->stored_types() : MatrixTypes{});
  for (const ParamInfo& p : model.table.params())
    stored->read_into(p, p.packed() ? static_cast<void*>(model.host_packed() + p.byte_offset)
                                    : static_cast<void*>(model.host_weights() + p.offset));
  // Messages name the weights' file (the index, when sharded) beside the tensor.
  require_finite_weights(model, stored->weights_file().string());
  return model;
}

void save_model_dir(const Model& model, const std::filesystem::path& dir) { save_difftx_model(model, dir); }

}  // namespace difftx::model
