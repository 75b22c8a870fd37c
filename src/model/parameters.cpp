#include "model/parameters.h"

#include <cmath>

#include "core/arena_plan.h"
#include "core/error.h"
#include "core/rng.h"

namespace difftx {

namespace {

// The schema of docs/SPEC.md §3: names, shapes, roles. Table order is the arena's (and the random
// stream's) order.
class SchemaBuilder {
 public:
  std::vector<ParamInfo> params;
  int64_t total = 0;

  void model(std::string name, std::vector<int64_t> shape, ParamInit init, float* ModelTensors::*view) {
    add(std::move(name), std::move(shape), init, -1, nullptr, view);
  }
  void layer(int64_t l, const std::string& name, std::vector<int64_t> shape, ParamInit init,
             float* LayerTensors::*view) {
    add("model.layers." + std::to_string(l) + "." + name, std::move(shape), init, l, view, nullptr);
  }

 private:
  void add(std::string name, std::vector<int64_t> shape, ParamInit init, int64_t layer, float* LayerTensors::*lv,
           float* ModelTensors::*mv) {
    int64_t numel = 1;
    for (int64_t s : shape) numel *= s;
    const bool decay = shape.size() >= 2;
    params.push_back({std::move(name), std::move(shape), total, numel, decay, init, layer, lv, mv});
    total += arena_rounded(numel);  // keep every tensor 64-byte aligned
  }
};

}  // namespace

ParameterTable::ParameterTable(const ModelConfig& c) {
  const AttentionVariant a = c.attention_variant();
  const int64_t D = c.hidden_size, F = c.intermediate_size, d = c.head_dim;
  using I = ParamInit;
  SchemaBuilder s;
  s.model("model.embed_tokens.weight", {c.vocab_size, D}, I::normal, &ModelTensors::embed);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    s.layer(l, "input_layernorm.weight", {D}, I::ones, &LayerTensors::input_norm);
    s.layer(l, "self_attn.q_proj.weight", {a.q_width(), D}, I::normal, &LayerTensors::q_proj);
    s.layer(l, "self_attn.k_proj.weight", {a.k_width(), D}, I::normal, &LayerTensors::k_proj);
    s.layer(l, "self_attn.v_proj.weight", {a.v_width(), D}, I::normal, &LayerTensors::v_proj);
    s.layer(l, "self_attn.o_proj.weight", {D, a.out_width()}, I::residual_normal, &LayerTensors::o_proj);
    if (a.lambda_source() == LambdaSource::layer_scalar) {  // Eq. 2's reparameterisation
      s.layer(l, "self_attn.lambda_q1", {d}, I::lambda_normal, &LayerTensors::lambda_q1);
      s.layer(l, "self_attn.lambda_k1", {d}, I::lambda_normal, &LayerTensors::lambda_k1);
      s.layer(l, "self_attn.lambda_q2", {d}, I::lambda_normal, &LayerTensors::lambda_q2);
      s.layer(l, "self_attn.lambda_k2", {d}, I::lambda_normal, &LayerTensors::lambda_k2);
    }
    if (c.has_head_norm()) s.layer(l, "self_attn.subln.weight", {2 * d}, I::ones, &LayerTensors::subln);
    if (a.lambda_source() == LambdaSource::token_logits)
      s.layer(l, "self_attn.lambda_proj.weight", {c.num_attention_heads, D}, I::normal, &LayerTensors::lambda_proj);
    s.layer(l, "post_attention_layernorm.weight", {D}, I::ones, &LayerTensors::post_norm);
    s.layer(l, "mlp.gate_proj.weight", {F, D}, I::normal, &LayerTensors::gate_proj);
    s.layer(l, "mlp.up_proj.weight", {F, D}, I::normal, &LayerTensors::up_proj);
    s.layer(l, "mlp.down_proj.weight", {D, F}, I::residual_normal, &LayerTensors::down_proj);
  }
  s.model("model.norm.weight", {D}, I::ones, &ModelTensors::final_norm);
  if (!c.tie_word_embeddings) s.model("lm_head.weight", {c.vocab_size, D}, I::normal, &ModelTensors::lm_head);
  params_ = std::move(s.params);
  total_ = s.total;
}

const ParamInfo* ParameterTable::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

ModelTensors bind_tensors(const ModelConfig& c, const ParameterTable& table, float* arena) {
  ModelTensors m{};
  m.layers.assign(c.num_hidden_layers, LayerTensors{});
  for (const ParamInfo& p : table.params()) {
    if (p.layer >= 0) m.layers[p.layer].*p.layer_view = arena + p.offset;
    else m.*p.model_view = arena + p.offset;
  }
  if (c.tie_word_embeddings) m.lm_head = m.embed;
  return m;
}

void init_parameters(const ModelConfig& c, const ParameterTable& table, float* arena, uint64_t seed) {
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * c.num_hidden_layers);
  for (const ParamInfo& p : table.params()) {
    float* w = arena + p.offset;
    if (p.init == ParamInit::ones) {
      for (int64_t i = 0; i < p.numel; ++i) w[i] = 1.0f;
      continue;
    }
    const double std = p.init == ParamInit::lambda_normal ? 0.1 : p.init == ParamInit::residual_normal ? residual_std : 0.02;
    for (int64_t i = 0; i < p.numel; ++i) w[i] = static_cast<float>(std * rng.normal());
  }
}

}  // namespace difftx
