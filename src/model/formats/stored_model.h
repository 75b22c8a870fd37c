// A model directory opened for reading tensor by tensor (docs/FORMATS.md "Streaming
// conversion"): its config and its safetensors headers, checked as a whole (every tensor the
// config calls for is present with the right dtype and shape, nothing else is), with no weight
// read yet. The format adapters (difftx_format.h, hf_format.h) open it and say where a tensor's
// rows come from in the file; load_model_dir reads every tensor into a Model, and `difftx convert`
// hands it to a writer that asks for one tensor at a time.
#pragma once
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>

#include "io/safetensors_set.h"
#include "model/formats/hf_layout.h"
#include "model/formats/stored_matrices.h"
#include "model/weight_source.h"

namespace difftx::model {

class StoredModel final : public WeightSource {
 public:
  // Opens the directory's safetensors headers (validated: io/safetensors_set.h); the adapter then
  // declares row maps and implied tensors and checks every tensor (check_tensor).
  StoredModel(const std::filesystem::path& dir, const ModelConfig& config);

  const ModelConfig& config() const override { return config_; }
  // Widened to F32 (rows reordered as declared), and checked finite: errors name the weights'
  // file (the index, when sharded) and the tensor.
  void read(const std::string& name, std::span<float> out) const override;
  // p's tensor into `dst` (p.bytes() bytes), widened to F32 or kept in its stored type as p.type
  // says (p from a ParameterTable of config() with stored_types(), or an all-F32 one). No finite
  // check (require_finite_weights does it on the loaded model).
  void read_into(const ParamInfo& p, void* dst) const;
  // The matrices the files hold in another type than F32, with that type.
  MatrixTypes stored_types() const;

  const std::filesystem::path& dir() const { return dir_; }
  const io::SafetensorsSet& weights() const { return weights_; }
  // model.safetensors, or the index when sharded: the name messages give.
  const std::filesystem::path& weights_file() const { return weights_file_; }
  const ParameterTable& table() const { return table_; }  // every tensor F32

  // For the adapters: tensor `name`'s rows in the file are in another order (dst row r <- file
  // row rows.map[r], of rows.source_rows); tensor `name` is not in the file and holds ones.
  void set_rows(const std::string& name, RowSource rows) { rows_[name] = std::move(rows); }
  void set_ones(const std::string& name) { ones_.insert(name); }
  // Error unless tensor p (of table()) is in the file with a dtype and shape read_into accepts.
  void check_tensor(const ParamInfo& p) const;

 private:
  const RowSource* rows_of(const std::string& name) const;

  std::filesystem::path dir_;
  ModelConfig config_;
  ParameterTable table_;
  io::SafetensorsSet weights_;
  std::filesystem::path weights_file_;
  std::map<std::string, RowSource> rows_;
  std::set<std::string> ones_;
};

}  // namespace difftx::model
