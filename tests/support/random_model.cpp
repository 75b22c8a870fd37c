#include "support/random_model.h"

#include "model/parameters.h"

namespace difftx::testing {

ModelConfig small_config(AttentionKind attention, const SmallShape& shape) {
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

Model random_model(const ModelConfig& config, uint64_t seed, float scale) {
  Model model(config);
  init_parameters(config, model.table, model.host_weights(), seed);
  if (scale != 1.0f)
    for (int64_t i = 0; i < model.weight_floats(); ++i) model.host_weights()[i] *= scale;
  return model;
}

}  // namespace difftx::testing
