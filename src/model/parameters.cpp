#include "model/parameters.h"

#include <algorithm>
#include <cmath>

#include "core/arena_plan.h"
#include "core/error.h"
#include "core/rng.h"

namespace difftx::model {

namespace {

// The schema of docs/SPEC.md §3: names, shapes, roles. Table order is the arena's (and the random
// stream's) order.
class SchemaBuilder {
 public:
  explicit SchemaBuilder(const MatrixTypes& types) : types_(types) {}
  std::vector<ParamInfo> params;
  int64_t total = 0;
  int64_t packed = 0;

  void model(std::string name, std::vector<int64_t> shape, ParamInit init, backends::DevicePtr<float> ModelTensors::*view,
             backends::DeviceMatrix ModelMatrices::*matrix = nullptr) {
    add({std::move(name), std::move(shape), 0, 0, false, init, -1, nullptr, view, nullptr, matrix});
  }
  void layer(int64_t l, const std::string& name, std::vector<int64_t> shape, ParamInit init,
             backends::DevicePtr<float> LayerTensors::*view, backends::DeviceMatrix LayerMatrices::*matrix = nullptr) {
    add({"model.layers." + std::to_string(l) + "." + name, std::move(shape), 0, 0, false, init, l, view, nullptr,
         matrix, nullptr});
  }
  // Every type asked for was used (a name that is not a matrix of this config is an error).
  void check_types_used() const {
    for (const auto& entry : types_) {
      const std::string& name = entry.first;  // (Clang 14 cannot capture a structured binding)
      const bool used = std::any_of(params.begin(), params.end(), [&](const ParamInfo& p) { return p.name == name; });
      DIFFTX_CHECK(used, "tensor '", name, "': no matrix of that name in this model (storage type ",
                   kernels::weight_type_name(entry.second), ")");
    }
  }

 private:
  void add(ParamInfo p) {
    p.numel = 1;
    for (int64_t s : p.shape) p.numel *= s;
    p.decay = p.shape.size() >= 2;
    const auto type = types_.find(p.name);
    if (type != types_.end() && type->second != kernels::WeightType::f32) {
      DIFFTX_CHECK(p.packable(), "tensor '", p.name,
                   "' is always F32; it cannot be stored as ", kernels::weight_type_name(type->second));
      p.type = type->second;
      p.byte_offset = packed;
      packed += (p.bytes() + 63) / 64 * 64;  // weight_row_bytes checks the block multiple
    } else {
      p.offset = total;
      total += arena_rounded(p.numel);  // keep every tensor 64-byte aligned
    }
    params.push_back(std::move(p));
  }
  const MatrixTypes& types_;
};

// A hybrid stack's tensors (config.h HybridConfig) under Hugging Face's Phi4Flash names
// (docs/FORMATS.md "Phi-4-mini-flash"), which a checkpoint holds as they are.
void hybrid_schema(const ModelConfig& c, SchemaBuilder& s) {
  const HybridConfig& h = *c.hybrid;
  const kernels::AttentionVariant a = c.attention_variant();
  const int64_t D = c.hidden_size, F = c.intermediate_size, d = c.head_dim, E = h.mamba_channels(D);
  const int64_t S = h.mamba.d_state, K = h.mamba.d_conv, R = h.mamba.dt_rank;
  using I = ParamInit;
  using L = LayerMatrices;
  using T = LayerTensors;
  s.model("model.embed_tokens.weight", {c.vocab_size, D}, I::normal, &ModelTensors::embed, &ModelMatrices::embed);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerKind kind = h.layers[l];
    switch (kind) {
      case LayerKind::mamba:
      case LayerKind::memory_mamba:
        s.layer(l, "attn.in_proj.weight", {2 * E, D}, I::normal, &T::in_proj, &L::in_proj);
        s.layer(l, "attn.conv1d.weight", {E, 1, K}, I::normal, &T::conv_weight);
        s.layer(l, "attn.conv1d.bias", {E}, I::zeros, &T::conv_bias);
        s.layer(l, "attn.x_proj.weight", {R + 2 * S, E}, I::normal, &T::x_proj, &L::x_proj);
        s.layer(l, "attn.dt_proj.weight", {E, R}, I::normal, &T::dt_proj, &L::dt_proj);
        s.layer(l, "attn.dt_proj.bias", {E}, I::zeros, &T::dt_bias);
        s.layer(l, "attn.A_log", {E, S}, I::zeros, &T::a_log);
        s.layer(l, "attn.D", {E}, I::ones, &T::d_skip);
        s.layer(l, "attn.out_proj.weight", {D, E}, I::residual_normal, &T::o_proj, &L::o_proj);
        break;
      case LayerKind::gmu:
        s.layer(l, "attn.in_proj.weight", {E, D}, I::normal, &T::in_proj, &L::in_proj);
        s.layer(l, "attn.out_proj.weight", {D, E}, I::residual_normal, &T::o_proj, &L::o_proj);
        break;
      case LayerKind::sliding_attention:
      case LayerKind::full_attention:
      case LayerKind::cross_attention: {
        const int64_t rows = kind == LayerKind::cross_attention ? a.q_width() : a.q_width() + a.k_width() + a.v_width();
        s.layer(l, "attn.Wqkv.weight", {rows, D}, I::normal, &T::qkv_proj, &L::qkv_proj);
        s.layer(l, "attn.Wqkv.bias", {rows}, I::zeros, &T::qkv_bias);
        s.layer(l, "attn.out_proj.weight", {D, a.out_width()}, I::residual_normal, &T::o_proj, &L::o_proj);
        s.layer(l, "attn.out_proj.bias", {D}, I::zeros, &T::o_bias);
        s.layer(l, "attn.inner_cross_attn.lambda_q1", {d}, I::lambda_normal, &T::lambda_q1);
        s.layer(l, "attn.inner_cross_attn.lambda_k1", {d}, I::lambda_normal, &T::lambda_k1);
        s.layer(l, "attn.inner_cross_attn.lambda_q2", {d}, I::lambda_normal, &T::lambda_q2);
        s.layer(l, "attn.inner_cross_attn.lambda_k2", {d}, I::lambda_normal, &T::lambda_k2);
        s.layer(l, "attn.inner_cross_attn.subln.weight", {2 * d}, I::ones, &T::subln);
        break;
      }
    }
    s.layer(l, "mlp.fc1.weight", {2 * F, D}, I::normal, &T::fc1, &L::fc1);
    s.layer(l, "mlp.fc2.weight", {D, F}, I::residual_normal, &T::down_proj, &L::down_proj);
    s.layer(l, "input_layernorm.weight", {D}, I::ones, &T::input_norm);
    s.layer(l, "input_layernorm.bias", {D}, I::zeros, &T::input_norm_bias);
    s.layer(l, "post_attention_layernorm.weight", {D}, I::ones, &T::post_norm);
    s.layer(l, "post_attention_layernorm.bias", {D}, I::zeros, &T::post_norm_bias);
  }
  s.model("model.final_layernorm.weight", {D}, I::ones, &ModelTensors::final_norm);
  s.model("model.final_layernorm.bias", {D}, I::zeros, &ModelTensors::final_norm_bias);
  if (!c.tie_word_embeddings)
    s.model("lm_head.weight", {c.vocab_size, D}, I::normal, &ModelTensors::lm_head, &ModelMatrices::lm_head);
}

// The decoder of docs/SPEC.md §3.
void decoder_schema(const ModelConfig& c, SchemaBuilder& s) {
  const kernels::AttentionVariant a = c.attention_variant();
  const int64_t D = c.hidden_size, F = c.intermediate_size, d = c.head_dim;
  using I = ParamInit;
  using L = LayerMatrices;
  s.model("model.embed_tokens.weight", {c.vocab_size, D}, I::normal, &ModelTensors::embed, &ModelMatrices::embed);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    s.layer(l, "input_layernorm.weight", {D}, I::ones, &LayerTensors::input_norm);
    s.layer(l, "self_attn.q_proj.weight", {a.q_width(), D}, I::normal, &LayerTensors::q_proj, &L::q_proj);
    s.layer(l, "self_attn.k_proj.weight", {a.k_width(), D}, I::normal, &LayerTensors::k_proj, &L::k_proj);
    s.layer(l, "self_attn.v_proj.weight", {a.v_width(), D}, I::normal, &LayerTensors::v_proj, &L::v_proj);
    s.layer(l, "self_attn.o_proj.weight", {D, a.out_width()}, I::residual_normal, &LayerTensors::o_proj, &L::o_proj);
    if (a.lambda_source() == kernels::LambdaSource::layer_scalar) {  // Eq. 2's reparameterisation
      s.layer(l, "self_attn.lambda_q1", {d}, I::lambda_normal, &LayerTensors::lambda_q1);
      s.layer(l, "self_attn.lambda_k1", {d}, I::lambda_normal, &LayerTensors::lambda_k1);
      s.layer(l, "self_attn.lambda_q2", {d}, I::lambda_normal, &LayerTensors::lambda_q2);
      s.layer(l, "self_attn.lambda_k2", {d}, I::lambda_normal, &LayerTensors::lambda_k2);
    }
    if (c.has_head_norm()) s.layer(l, "self_attn.subln.weight", {2 * d}, I::ones, &LayerTensors::subln);
    if (a.lambda_source() == kernels::LambdaSource::token_logits)
      s.layer(l, "self_attn.lambda_proj.weight", {c.num_attention_heads, D}, I::normal, &LayerTensors::lambda_proj, &L::lambda_proj);
    s.layer(l, "post_attention_layernorm.weight", {D}, I::ones, &LayerTensors::post_norm);
    s.layer(l, "mlp.gate_proj.weight", {F, D}, I::normal, &LayerTensors::gate_proj, &L::gate_proj);
    s.layer(l, "mlp.up_proj.weight", {F, D}, I::normal, &LayerTensors::up_proj, &L::up_proj);
    s.layer(l, "mlp.down_proj.weight", {D, F}, I::residual_normal, &LayerTensors::down_proj, &L::down_proj);
    if (c.hidden_act == MlpActivation::poly_norm) {  // docs/SPEC.md §1.1
      s.layer(l, "mlp.act_fn.weight", {3}, I::thirds, &LayerTensors::act_weight);
      s.layer(l, "mlp.act_fn.bias", {1}, I::zeros, &LayerTensors::act_bias);
    }
  }
  s.model("model.norm.weight", {D}, I::ones, &ModelTensors::final_norm);
  if (!c.tie_word_embeddings) s.model("lm_head.weight", {c.vocab_size, D}, I::normal, &ModelTensors::lm_head,
                                           &ModelMatrices::lm_head);
}

}  // namespace

ParameterTable::ParameterTable(const ModelConfig& c, const MatrixTypes& types) {
  SchemaBuilder s(types);
  if (c.hybrid) hybrid_schema(c, s);
  else decoder_schema(c, s);
  s.check_types_used();
  params_ = std::move(s.params);
  total_ = s.total;
  packed_ = s.packed;
}

bool ParamInfo::packable() const { return is_matrix() && layer_matrix != &LayerMatrices::lambda_proj; }

const ParamInfo* ParameterTable::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

ModelTensors bind_tensors(const ModelConfig& c, const ParameterTable& table, backends::DevicePtr<float> arena) {
  ModelTensors m{};
  m.layers.assign(c.num_hidden_layers, LayerTensors{});
  for (const ParamInfo& p : table.params()) {
    const backends::DevicePtr<float> view = p.packed() ? nullptr : arena + p.offset;
    if (p.layer >= 0) m.layers[p.layer].*p.layer_view = view;
    else m.*p.model_view = view;
  }
  if (c.tie_word_embeddings) m.lm_head = m.embed;
  return m;
}

namespace {

// Rows [first, first + count) of W, a matrix of its own.
backends::DeviceMatrix row_slice(const backends::DeviceMatrix& W, int64_t first, int64_t count) {
  return {W.type, W.data + first * kernels::weight_row_bytes(W.type, W.cols), count, W.cols, {}};
}

// LayerMatrices' split views of a hybrid stack's fused matrices.
void split_hybrid_matrices(const ModelConfig& c, ModelMatrices& m) {
  const HybridConfig& h = *c.hybrid;
  const kernels::AttentionVariant a = c.attention_variant();
  const int64_t E = h.mamba_channels(c.hidden_size), S = h.mamba.d_state, R = h.mamba.dt_rank;
  const int64_t F = c.intermediate_size, qw = a.q_width(), kw = a.k_width(), vw = a.v_width();
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerMatrices& x = m.layers[l];
    switch (h.layers[l]) {
      case LayerKind::mamba:
      case LayerKind::memory_mamba:
        x.mamba_x = row_slice(x.in_proj, 0, E);
        x.mamba_z = row_slice(x.in_proj, E, E);
        x.ssm_dt = row_slice(x.x_proj, 0, R);
        x.ssm_b = row_slice(x.x_proj, R, S);
        x.ssm_c = row_slice(x.x_proj, R + S, S);
        break;
      case LayerKind::sliding_attention:
      case LayerKind::full_attention:
        x.k_proj = row_slice(x.qkv_proj, qw, kw);
        x.v_proj = row_slice(x.qkv_proj, qw + kw, vw);
        [[fallthrough]];
      case LayerKind::cross_attention: x.q_proj = row_slice(x.qkv_proj, 0, qw); break;
      case LayerKind::gmu: break;
    }
    x.gate_proj = row_slice(x.fc1, 0, F);
    x.up_proj = row_slice(x.fc1, F, F);
  }
}

}  // namespace

ModelMatrices bind_matrices(const ModelConfig& c, const ParameterTable& table, backends::DevicePtr<float> arena,
                            backends::DevicePtr<unsigned char> packed) {
  ModelMatrices m{};
  m.layers.assign(c.num_hidden_layers, LayerMatrices{});
  for (const ParamInfo& p : table.params()) {
    if (!p.is_matrix()) continue;
    const backends::DevicePtr<const void> data = p.packed() ? backends::device_cast<const void>(packed + p.byte_offset)
                                                            : backends::device_cast<const void>(arena + p.offset);
    const backends::DeviceMatrix view{p.type, data, p.shape[0], p.shape[1], {}};
    if (p.layer >= 0) m.layers[p.layer].*p.layer_matrix = view;
    else m.*p.model_matrix = view;
  }
  if (c.hybrid) split_hybrid_matrices(c, m);
  if (c.tie_word_embeddings) m.lm_head = m.embed;
  return m;
}

namespace {
bool constant_init(const ParamInfo& p) {
  return p.init == ParamInit::ones || p.init == ParamInit::thirds || p.init == ParamInit::zeros;
}
}  // namespace

uint64_t init_draws(const ParamInfo& p) { return constant_init(p) ? 0 : 2 * static_cast<uint64_t>(p.numel); }

void init_tensor(const ModelConfig& c, const ParamInfo& p, Rng& rng, float* out) {
  if (constant_init(p)) {
    const float value = p.init == ParamInit::ones ? 1.0f : p.init == ParamInit::thirds ? 1.0f / 3.0f : 0.0f;
    std::fill(out, out + p.numel, value);
    return;
  }
  const double residual_std = 0.02 / std::sqrt(2.0 * c.num_hidden_layers);
  const double std = p.init == ParamInit::lambda_normal ? 0.1 : p.init == ParamInit::residual_normal ? residual_std : 0.02;
  // the values of one sequential stream (normal() draws twice), in pieces over the threads
  constexpr int64_t kPiece = 1 << 16;
  const uint64_t start = rng.state();
#pragma omp parallel for schedule(static) if (p.numel > kPiece)
  for (int64_t i0 = 0; i0 < p.numel; i0 += kPiece) {
    Rng piece(start);
    piece.skip(2 * static_cast<uint64_t>(i0));
    for (int64_t i = i0; i < std::min(p.numel, i0 + kPiece); ++i) out[i] = static_cast<float>(std * piece.normal());
  }
  rng.skip(init_draws(p));
}

void init_parameters(const ModelConfig& c, const ParameterTable& table, float* arena, uint64_t seed) {
  DIFFTX_CHECK(table.all_f32(), "init_parameters: the table holds packed matrices (initialise in F32, then convert)");
  Rng rng(seed);
  for (const ParamInfo& p : table.params()) init_tensor(c, p, rng, arena + p.offset);
}

}  // namespace difftx::model
