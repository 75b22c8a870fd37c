#include "model/parameters.h"

#include <cmath>

#include "core/error.h"
#include "core/rng.h"

namespace difftx {

ParameterTable::ParameterTable(const ModelConfig& c) {
  const AttentionDims a = c.attention_dims(1, 1);
  const int64_t D = c.hidden_size, F = c.intermediate_size, d = c.head_dim;
  add("model.embed_tokens.weight", {c.vocab_size, D});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {D});
    add(p + "self_attn.q_proj.weight", {a.q_width(), D});
    add(p + "self_attn.k_proj.weight", {a.k_width(), D});
    add(p + "self_attn.v_proj.weight", {a.v_width(), D});
    add(p + "self_attn.o_proj.weight", {D, a.out_width()});
    if (c.attention == AttentionKind::diff) {
      for (const char* v : {"lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"}) add(p + "self_attn." + v, {d});
      if (c.diff_subln) add(p + "self_attn.subln.weight", {2 * d});
    }
    if (c.attention == AttentionKind::diff2) add(p + "self_attn.lambda_proj.weight", {c.num_attention_heads, D});
    add(p + "post_attention_layernorm.weight", {D});
    add(p + "mlp.gate_proj.weight", {F, D});
    add(p + "mlp.up_proj.weight", {F, D});
    add(p + "mlp.down_proj.weight", {D, F});
  }
  add("model.norm.weight", {D});
  if (!c.tie_word_embeddings) add("lm_head.weight", {c.vocab_size, D});
}

void ParameterTable::add(std::string name, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  const bool decay = shape.size() >= 2;
  params_.push_back({std::move(name), std::move(shape), total_, numel, decay});
  total_ += (numel + 15) / 16 * 16;  // keep every tensor 64-byte aligned
}

const ParamInfo* ParameterTable::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

ModelTensors bind_tensors(const ModelConfig& c, const ParameterTable& table, float* arena) {
  auto at = [&](const std::string& name) -> float* {
    const ParamInfo* p = table.find(name);
    return p ? arena + p->offset : nullptr;
  };
  ModelTensors m;
  m.embed = at("model.embed_tokens.weight");
  m.final_norm = at("model.norm.weight");
  m.lm_head = c.tie_word_embeddings ? m.embed : at("lm_head.weight");
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerTensors t;
    t.input_norm = at(p + "input_layernorm.weight");
    t.q_proj = at(p + "self_attn.q_proj.weight");
    t.k_proj = at(p + "self_attn.k_proj.weight");
    t.v_proj = at(p + "self_attn.v_proj.weight");
    t.o_proj = at(p + "self_attn.o_proj.weight");
    t.lambda_q1 = at(p + "self_attn.lambda_q1");
    t.lambda_k1 = at(p + "self_attn.lambda_k1");
    t.lambda_q2 = at(p + "self_attn.lambda_q2");
    t.lambda_k2 = at(p + "self_attn.lambda_k2");
    t.subln = at(p + "self_attn.subln.weight");
    t.lambda_proj = at(p + "self_attn.lambda_proj.weight");
    t.post_norm = at(p + "post_attention_layernorm.weight");
    t.gate_proj = at(p + "mlp.gate_proj.weight");
    t.up_proj = at(p + "mlp.up_proj.weight");
    t.down_proj = at(p + "mlp.down_proj.weight");
    m.layers.push_back(t);
  }
  return m;
}

void init_parameters(const ModelConfig& c, const ParameterTable& table, float* arena, uint64_t seed) {
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * c.num_hidden_layers);
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const ParamInfo& p : table.params()) {
    float* w = arena + p.offset;
    const bool is_lambda_vector = p.name.find("self_attn.lambda_") != std::string::npos && p.shape.size() == 1;
    if (p.shape.size() == 1 && !is_lambda_vector) {
      for (int64_t i = 0; i < p.numel; ++i) w[i] = 1.0f;  // norm gains
      continue;
    }
    double std = 0.02;
    if (is_lambda_vector) std = 0.1;
    else if (ends_with(p.name, "o_proj.weight") || ends_with(p.name, "down_proj.weight")) std = residual_std;
    for (int64_t i = 0; i < p.numel; ++i) w[i] = static_cast<float>(std * rng.normal());
  }
}

}  // namespace difftx
