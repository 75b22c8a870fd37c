#include "model/formats/difftx_format.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_set.h"

namespace difftx {

Model load_difftx_model(const std::filesystem::path& dir, const nlohmann::json& config) {
  Model model(config_from_json(config, (dir / "config.json").string()));
  const SafetensorsSet weights(dir);
  for (const ParamInfo& p : model.table.params()) {
    DIFFTX_CHECK(weights.contains(p.name), dir.string(), ": missing tensor '", p.name, "' that config.json calls for");
    weights.read_f32(p.name, std::span<float>(model.weights.data() + p.offset, p.numel), p.shape);
  }
  for (const std::string& name : weights.names())
    DIFFTX_CHECK(model.table.find(name) != nullptr, weights.file_of(name).string(), ": tensor '", name,
                 "' does not belong to the model config.json describes",
                 name == "lm_head.weight" ? " (tie_word_embeddings is true)" : "");
  return model;
}

void save_difftx_model(const Model& model, const std::filesystem::path& dir, StoredFloat stored) {
  std::filesystem::create_directories(dir);
  std::vector<SafetensorsEntry> entries;
  for (const ParamInfo& p : model.table.params())
    entries.push_back({p.name, p.shape, std::span<const float>(model.weights.data() + p.offset, p.numel), stored});
  write_safetensors(dir / "model.safetensors", entries, {{"format", "pt"}, {"producer", "difftx"}});
  write_json_file(dir / "config.json", config_to_json(model.config));
}

}  // namespace difftx
