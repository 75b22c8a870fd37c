// Small models with random weights for the evaluation tests: one shape (D = 32, two heads of
// d = 8 over one KV head) in every variant, vocabulary, depth and MLP width as each test needs.
#pragma once
#include <cstdint>

#include "model/config.h"
#include "model/model.h"

namespace difftx::testing {

struct SmallShape {
  int64_t vocab_size = 64;
  int64_t layers = 2;
  int64_t intermediate_size = 64;
  int64_t max_positions = 2048;  // config.json's default
};

// Validated.
ModelConfig small_config(AttentionKind attention, const SmallShape& shape);

// A model of `config` with the weights init_parameters draws from `seed`, multiplied by `scale`
// (above 1: sharper attention maps and logits further from 0 than at initialisation).
Model random_model(const ModelConfig& config, uint64_t seed, float scale = 1.0f);

}  // namespace difftx::testing
