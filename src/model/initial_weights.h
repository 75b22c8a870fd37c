// Freshly initialised weights as a WeightSource (`difftx init`): each tensor is drawn when a
// writer asks for it, from the one seeded stream init_parameters draws in table order, so the
// model is never whole in memory (a 12.7B shape initialises on a 24 GB machine) and its values
// are init_parameters' bit for bit.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "core/rng.h"
#include "model/parameters.h"
#include "model/weight_source.h"

namespace difftx::model {

class InitialWeights final : public WeightSource {
 public:
  InitialWeights(const ModelConfig& config, uint64_t seed);
  const ModelConfig& config() const override { return config_; }
  // In table order each tensor is drawn once; a tensor before the last one asked for restarts the
  // stream from the seed (the writers ask in table order).
  void read(const std::string& name, std::span<float> out) const override;

 private:
  ModelConfig config_;
  ParameterTable table_;
  uint64_t seed_;
  mutable Rng rng_;
  mutable size_t next_ = 0;  // the table index rng_ draws next
};

}  // namespace difftx::model
