#include "model/formats/difftx_format.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_set.h"

namespace difftx {

Model load_difftx_model(const std::filesystem::path& dir, const nlohmann::json& config, MatrixPrecision precision) {
  const ModelConfig c = config_from_json(config, (dir / "config.json").string());
  const SafetensorsSet weights(dir);
  Model model(c, matrix_types_of(ParameterTable(c), weights, precision));
  for (const ParamInfo& p : model.table.params()) {
    DIFFTX_CHECK(weights.contains(p.name), dir.string(), ": missing tensor '", p.name, "' that config.json calls for");
    read_weight(weights, p.name, p, model);
  }
  for (const std::string& name : weights.names())
    DIFFTX_CHECK(model.table.find(name) != nullptr, weights.file_of(name).string(), ": tensor '", name,
                 "' does not belong to the model config.json describes",
                 name == "lm_head.weight" ? " (tie_word_embeddings is true)" : "");
  return model;
}

void save_difftx_model(const Model& model, const std::filesystem::path& dir, StoredFloat stored) {
  std::filesystem::create_directories(dir);
  std::map<std::string, std::string> metadata{{"format", "pt"}, {"producer", "difftx"}};
  std::vector<SafetensorsEntry> entries;
  for (const ParamInfo& p : model.table.params()) {
    if (p.packed()) entries.push_back(packed_entry(model, p, metadata));
    else entries.push_back({p.name, p.shape, std::span<const float>(model.weights.data() + p.offset, p.numel), stored});
  }
  write_safetensors(dir / "model.safetensors", entries, metadata);
  write_json_file(dir / "config.json", config_to_json(model.config));
}

}  // namespace difftx
