// Small models with random weights for the evaluation tests: one shape (D = 32, two heads of
// d = 8 over one KV head) in every variant, vocabulary, depth and MLP width as each test needs.
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.h"
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
model::ModelConfig small_config(kernels::AttentionKind attention, const SmallShape& shape);

// A hybrid stack (Phi-4-mini-flash's SambaY layout, read by config_from_phi4flash): `layers`
// layers (a multiple of 4), 8 heads of hidden / 8 over 4 key/value heads (pair-GQA: 4 pair-heads
// over 2), Mamba's state 8, a sliding window of `window` keys. Validated.
model::ModelConfig small_hybrid_config(int64_t hidden = 64, int64_t layers = 8, int64_t window = 5, int64_t vocab = 96,
                                       int64_t max_positions = 512);

// The engine tests' decoder: 2 layers, 4 heads of d = 16 over 2 key/value heads, an MLP of 128;
// the embedding tied for DIFF V1, 2 signal heads per noise head for grouped attention. Validated.
model::ModelConfig engine_config(kernels::AttentionKind attention, int64_t hidden, int64_t vocab,
                                 int64_t max_positions);

// A model of `config` with the weights init_parameters draws from `seed`, multiplied by `scale`
// (above 1: sharper attention maps and logits further from 0 than at initialisation).
model::Model random_model(const model::ModelConfig& config, uint64_t seed, float scale = 1.0f);

// n token ids drawn uniformly from [0, vocab).
std::vector<int32_t> random_tokens(Rng& rng, int64_t n, int64_t vocab);
// The same from a generator of its own, seeded with `seed`.
std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed);

}  // namespace difftx::testing
