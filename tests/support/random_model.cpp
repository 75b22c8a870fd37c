#include "support/random_model.h"

#include <nlohmann/json.hpp>

#include "model/formats/phi4flash_config.h"
#include "model/parameters.h"

namespace difftx::testing {

using model::ModelConfig;

ModelConfig small_config(kernels::AttentionKind attention, const SmallShape& shape) {
  ModelConfig c;
  c.attention = attention;
  c.vocab_size = shape.vocab_size;
  c.hidden_size = 32;
  c.num_hidden_layers = shape.layers;
  c.num_attention_heads = 2;
  c.num_key_value_heads = 1;
  c.head_dim = 8;
  c.intermediate_size = shape.intermediate_size;
  c.max_position_embeddings = shape.max_positions;
  c.validate();
  return c;
}

ModelConfig engine_config(kernels::AttentionKind attention, int64_t hidden, int64_t vocab, int64_t max_positions) {
  ModelConfig c;
  c.attention = attention;
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.intermediate_size = 128;
  c.max_position_embeddings = max_positions;
  c.tie_word_embeddings = attention == kernels::AttentionKind::diff;
  if (attention == kernels::AttentionKind::diff_grouped) c.grouped_ratio = 2;  // 2 noise heads, one per kv head
  c.validate();
  return c;
}

ModelConfig small_hybrid_config(int64_t hidden, int64_t layers, int64_t window, int64_t vocab, int64_t max_positions) {
  const nlohmann::json j = {{"model_type", "phi4flash"},       {"vocab_size", vocab},
                            {"hidden_size", hidden},           {"intermediate_size", 2 * hidden},
                            {"num_hidden_layers", layers},     {"num_attention_heads", 8},
                            {"num_key_value_heads", 4},        {"sliding_window", window},
                            {"mamba_d_state", 8},              {"max_position_embeddings", max_positions}};
  return model::config_from_phi4flash(j, "small_hybrid_config");
}

model::Model random_model(const ModelConfig& config, uint64_t seed, float scale) {
  model::Model model(config);
  model::init_parameters(config, model.table, model.host_weights(), seed);
  if (scale != 1.0f)
    for (int64_t i = 0; i < model.weight_floats(); ++i) model.host_weights()[i] *= scale;
  return model;
}

std::vector<int32_t> random_tokens(Rng& rng, int64_t n, int64_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& id : t) id = static_cast<int32_t>(rng.below(vocab));
  return t;
}

std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  Rng rng(seed);
  return random_tokens(rng, n, vocab);
}

}  // namespace difftx::testing
