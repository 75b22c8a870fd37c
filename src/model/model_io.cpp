#include "model/model_io.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "model/finite_weights.h"

namespace difftx {

Model load_model_dir(const std::filesystem::path& dir) {
  DIFFTX_CHECK(std::filesystem::is_directory(dir), dir.string(), ": not a model directory (it does not exist)");
  const auto config_path = dir / "config.json";
  const auto weights_path = dir / "model.safetensors";
  DIFFTX_CHECK(std::filesystem::exists(config_path), dir.string(), ": no config.json in the model directory");
  DIFFTX_CHECK(std::filesystem::exists(weights_path), dir.string(), ": no model.safetensors in the model directory");
  Model model(config_from_file(config_path.string()));
  SafetensorsReader reader(weights_path);
  for (const ParamInfo& p : model.table.params()) {
    DIFFTX_CHECK(reader.contains(p.name), weights_path.string(), ": missing tensor '", p.name,
                 "' that config.json calls for");
    reader.read_f32(p.name, std::span<float>(model.weights.data() + p.offset, p.numel), p.shape);
  }
  for (const std::string& name : reader.names())
    DIFFTX_CHECK(model.table.find(name) != nullptr, weights_path.string(), ": tensor '", name,
                 "' does not belong to the model config.json describes",
                 name == "lm_head.weight" ? " (tie_word_embeddings is true)" : "");
  require_finite_weights(model, weights_path.string());
  return model;
}

void save_model_dir(const Model& model, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::vector<SafetensorsEntry> entries;
  for (const ParamInfo& p : model.table.params())
    entries.push_back({p.name, p.shape, std::span<const float>(model.weights.data() + p.offset, p.numel)});
  write_safetensors(dir / "model.safetensors", entries, {{"format", "pt"}, {"producer", "difftx"}});
  write_json_file(dir / "config.json", config_to_json(model.config));
}

}  // namespace difftx
