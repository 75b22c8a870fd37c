#include "model/formats/difftx_format.h"

#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_set.h"
#include "model/storage_plan.h"

namespace difftx::model {

std::unique_ptr<StoredModel> open_difftx_model(const std::filesystem::path& dir, const nlohmann::json& config) {
  const ModelConfig c = config_from_json(config, (dir / "config.json").string());
  auto model = std::make_unique<StoredModel>(dir, c);
  for (const ParamInfo& p : model->table().params()) model->check_tensor(p);
  const io::SafetensorsSet& weights = model->weights();
  for (const std::string& name : weights.names())
    DIFFTX_CHECK(model->table().find(name) != nullptr, weights.file_of(name).string(), ": tensor '", name,
                 "' does not belong to the model config.json describes",
                 name == "lm_head.weight" ? " (tie_word_embeddings is true)" : "");
  return model;
}

void save_difftx_model(const Model& model, const std::filesystem::path& dir, io::StoredFloat stored) {
  const nlohmann::json config = config_to_json(model.config);  // refuses a model the format cannot hold: before any write
  std::filesystem::create_directories(dir);
  std::map<std::string, std::string> metadata{{"format", "pt"}, {"producer", "difftx"}};
  std::vector<io::SafetensorsEntry> entries;
  for (const ParamInfo& p : model.table.params()) {
    if (p.packed()) entries.push_back(packed_entry(model, p, metadata));
    else entries.push_back({p.name, p.shape, std::span<const float>(model.host_weights() + p.offset, p.numel), stored});
  }
  io::write_safetensors(dir / "model.safetensors", entries, metadata);
  io::write_json_file(dir / "config.json", config);
}

void save_difftx_model(const WeightSource& source, const MatrixTypes& types, const std::filesystem::path& dir,
                       io::StoredFloat stored) {
  const nlohmann::json config = config_to_json(source.config());  // before any write, as above
  const ParameterTable table(source.config(), types);
  std::map<std::string, std::string> metadata{{"format", "pt"}, {"producer", "difftx"}};
  std::vector<io::SafetensorsTensorSpec> specs;
  for (const ParamInfo& p : table.params())
    specs.push_back(p.packed() ? packed_spec(p, metadata) : io::SafetensorsTensorSpec{p.name, p.shape, io::stored_float_name(stored)});
  std::filesystem::create_directories(dir);
  std::vector<float> widened;  // one tensor at a time: the buffers grow to the largest
  std::vector<unsigned char> converted;
  io::write_safetensors(dir / "model.safetensors", specs, metadata, [&](const io::SafetensorsTensorSpec& spec) {
    const ParamInfo& p = *table.find(spec.name);
    widened.resize(p.numel);
    source.read(p.name, widened);
    if (!p.packed()) return io::SafetensorsEntry{p.name, p.shape, std::span<const float>(widened), stored};
    converted.resize(p.bytes());
    convert_tensor(p, widened, converted.data());
    return io::SafetensorsEntry{p.name, spec.shape, io::StoredBytes{spec.dtype, converted}};
  });
  io::write_json_file(dir / "config.json", config);
}

}  // namespace difftx::model
