// Where a model's weights come from when a writer takes them one tensor at a time (the format
// writers of model/formats/, `difftx convert`): a model in memory, or a model directory whose
// tensors are read from its files only when asked for (model_io.h: open_model_dir), so that a
// conversion holds a few tensors in memory, never the model.
#pragma once
#include <span>
#include <string>

#include "model/model.h"

namespace difftx::model {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual const ModelConfig& config() const = 0;
  // Tensor `name` of ParameterTable(config()) widened to F32 into `out` (its element count):
  // what the F32 arena of the model loaded in full would hold. Errors name the tensor.
  virtual void read(const std::string& name, std::span<float> out) const = 0;
};

// A model in memory (any precision: packed matrices are widened); borrows it.
class ModelWeights final : public WeightSource {
 public:
  explicit ModelWeights(const Model& model) : model_(model) {}
  const ModelConfig& config() const override { return model_.config; }
  void read(const std::string& name, std::span<float> out) const override;

 private:
  const Model& model_;
};

}  // namespace difftx::model
