#include "model/model_io.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"
#include "model/formats/difftx_format.h"
#include "model/formats/hf_config.h"
#include "model/formats/hf_format.h"

namespace difftx {

Model load_model_dir(const std::filesystem::path& dir) {
  DIFFTX_CHECK(std::filesystem::is_directory(dir), dir.string(), ": not a model directory (it does not exist)");
  const auto config_path = dir / "config.json";
  DIFFTX_CHECK(std::filesystem::exists(config_path), dir.string(), ": no config.json in the model directory");
  const nlohmann::json config = read_json_file(config_path);
  const nlohmann::json* type = config.is_object() && config.contains("model_type") ? &config.at("model_type") : nullptr;
  const std::string model_type = type && type->is_string() ? type->get<std::string>() : "";
  HfArchitecture hf;
  if (hf_architecture_of(model_type, &hf)) return load_hf_model(dir, config);
  DIFFTX_CHECK(!type || model_type == "difftx", config_path.string(), ": model_type ", type->dump().substr(0, 64),
               " is not one difftx reads (\"difftx\", \"llama\", \"diffllama\")");
  return load_difftx_model(dir, config);
}

void save_model_dir(const Model& model, const std::filesystem::path& dir) { save_difftx_model(model, dir); }

}  // namespace difftx
