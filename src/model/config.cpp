#include "model/config.h"

#include <cmath>
#include <initializer_list>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/checked.h"
#include "core/error.h"
#include "io/json_file.h"
#include "model/hybrid_config_json.h"
#include "model/parameters.h"

namespace difftx::model {

using kernels::RopeScalingType;

namespace {

using nlohmann::json;

// Keys other tools write into config.json that do not change the model we build. Each is
// accepted only with a value that agrees with docs/SPEC.md §1 (checked in config_from_json).
const std::set<std::string> kBookkeepingKeys = {
    "architectures", "transformers_version", "torch_dtype",  "bos_token_id", "eos_token_id",
    "pad_token_id",  "initializer_range",    "use_cache",    "attention_bias",
    "mlp_bias",      "attention_dropout", "pretraining_tp", "_name_or_path"};

const std::set<std::string> kModelKeys = {
    "model_type",     "attention",          "vocab_size",          "hidden_size",
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size", "max_position_embeddings", "rope_theta",    "rope_style",
    "rms_norm_eps",   "tie_word_embeddings", "lambda_init",        "diff_subln",
    "rope_scaling",   "grouped_ratio",       "head_norm_eps",      "hidden_act",
    "hybrid"};

int64_t get_positive_int(const json& j, const std::string& key, const std::string& where) {
  const json& v = j.at(key);
  DIFFTX_CHECK(v.is_number_integer() && v.get<int64_t>() > 0, where, ": key '", key,
               "' must be a positive integer, got ", io::json_value_for_message(v));
  return v.get<int64_t>();
}

double get_positive_number(const json& j, const std::string& key, const std::string& where) {
  const json& v = j.at(key);
  DIFFTX_CHECK(v.is_number() && v.get<double>() > 0, where, ": key '", key,
               "' must be a positive number, got ", io::json_value_for_message(v));
  return v.get<double>();
}

bool get_bool(const json& j, const std::string& key, const std::string& where) {
  const json& v = j.at(key);
  DIFFTX_CHECK(v.is_boolean(), where, ": key '", key, "' must be true or false, got ", io::json_value_for_message(v));
  return v.get<bool>();
}

// A key naming one of two choices, `a` or `b`; `choices` spells them for the error.
template <typename E>
E named_choice(const json& j, const std::string& key, std::pair<const char*, E> a, std::pair<const char*, E> b,
               const char* choices, const std::string& where) {
  const json& v = j.at(key);
  DIFFTX_CHECK(v == json(a.first) || v == json(b.first), where, ": key '", key, "' must be ", choices, ", got ",
               io::json_value_for_message(v));
  return v == json(b.first) ? b.second : a.second;
}

void check_bookkeeping(const json& j, const std::string& where) {
  auto expect = [&](const char* key, bool ok, const char* what) {
    if (j.contains(key)) DIFFTX_CHECK(ok, where, ": key '", key, "' must be ", what, ", got ", io::json_value_for_message(j.at(key)));
  };
  expect("attention_bias", j.value("attention_bias", json(false)) == json(false), "false (no biases)");
  expect("mlp_bias", j.value("mlp_bias", json(false)) == json(false), "false (no biases)");
  const json dropout = j.value("attention_dropout", json(0));
  expect("attention_dropout", dropout.is_number() && dropout.get<double>() == 0.0, "0");
  expect("pretraining_tp", j.value("pretraining_tp", json(1)) == json(1), "1");
}

}  // namespace

const char* layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::mamba: return "mamba";
    case LayerKind::memory_mamba: return "memory_mamba";
    case LayerKind::sliding_attention: return "sliding_attention";
    case LayerKind::full_attention: return "full_attention";
    case LayerKind::gmu: return "gmu";
    case LayerKind::cross_attention: return "cross_attention";
  }
  fail("layer kind: invalid enum value ", static_cast<int>(kind));
}

void ModelConfig::require_decoder(const std::string& what) const {
  DIFFTX_CHECK(!hybrid, what, " is written for docs/SPEC.md's decoder; this model is a hybrid stack (Mamba, ",
               "sliding-window and cross-decoder layers), which difftx runs for `logits`, `eval` and generation ",
               "(`generate`, `chat`, `serve`, the inference benches, Python's and the C API's engines; also as the ",
               "target of a draft), not for this");
}

double ModelConfig::lambda_init(int64_t layer_index) const {
  if (lambda_init_constant) return *lambda_init_constant;
  const int64_t l_minus_1 = lambda_init_shifted ? layer_index - 1 : layer_index;
  return 0.8 - 0.6 * std::exp(-0.3 * static_cast<double>(l_minus_1));
}

kernels::AttentionDims ModelConfig::attention_dims(int64_t B, int64_t T) const {
  return kernels::AttentionDims{attention, B, T, num_attention_heads, num_key_value_heads, head_dim, grouped_ratio};
}

int64_t ModelConfig::non_embedding_parameters() const {
  // Every tensor of the schema (parameters.h) but the token embedding; the LM head counts even
  // when tied (docs/SPEC.md §4 counts its FLOPs).
  int64_t total = 0;
  const ParameterTable table(*this);  // named: a range-for over a temporary's params() would dangle
  for (const ParamInfo& p : table.params()) total += p.numel;
  const int64_t embed = vocab_size * hidden_size;
  return total - embed + (tie_word_embeddings ? embed : 0);
}

int64_t ModelConfig::total_parameters() const {
  const int64_t embed = vocab_size * hidden_size;
  return non_embedding_parameters() + (tie_word_embeddings ? 0 : embed);
}

double ModelConfig::forward_flops(int64_t B, int64_t T) const {
  const double attention_flops = num_hidden_layers * attention_variant().forward_flops(T);
  return B * (2.0 * T * non_embedding_parameters() + attention_flops);
}

namespace {

// Upper bounds on the sizes a config may ask for, checked before anything multiplies them:
// far above any model this CPU engine trains, far below where products overflow int64.
void check_sizes(std::initializer_list<std::pair<const char*, std::pair<int64_t, int64_t>>> sizes) {
  for (const auto& [key, value_and_max] : sizes)
    DIFFTX_CHECK(value_and_max.first <= value_and_max.second, "config: '", key, "' is ", value_and_max.first,
                 ", above the largest supported ", value_and_max.second);
}

// The sizes config_from_json derives default head_dim and intermediate_size from, bounded before
// it multiplies them.
void check_sizes_before_defaults(const ModelConfig& c) {
  check_sizes({{"hidden_size", {c.hidden_size, int64_t{1} << 16}},
               {"num_attention_heads", {c.num_attention_heads, int64_t{1} << 12}},
               {"num_key_value_heads", {c.num_key_value_heads, int64_t{1} << 12}}});
}

void check_config_sizes(const ModelConfig& c) {
  check_sizes_before_defaults(c);
  check_sizes({{"vocab_size", {c.vocab_size, int64_t{1} << 24}},
               {"num_hidden_layers", {c.num_hidden_layers, int64_t{1} << 12}},
               {"head_dim", {c.head_dim, int64_t{1} << 12}},
               {"intermediate_size", {c.intermediate_size, int64_t{1} << 20}},
               {"max_position_embeddings", {c.max_position_embeddings, int64_t{1} << 24}}});
  // The RoPE table holds max_position_embeddings x head_dim / 2 angle pairs.
  DIFFTX_CHECK(product_at_most({c.max_position_embeddings, c.head_dim}, int64_t{1} << 31).has_value(),
               "config: 'max_position_embeddings' x 'head_dim' = ", c.max_position_embeddings, " x ", c.head_dim,
               " is above 2^31 (the RoPE table would not fit in memory)");
  constexpr int64_t kMaxParameters = int64_t{1} << 36;  // 256 GiB of float32
  DIFFTX_CHECK(c.total_parameters() <= kMaxParameters, "config: ", c.total_parameters(),
               " parameters are above the largest supported ", kMaxParameters);
}

// The hybrid's own checks (HybridConfig): one kind per layer, the memory and the shared keys and
// values made before the layers that read them, the sizes bounded.
void validate_hybrid(const ModelConfig& c) {
  const HybridConfig& h = *c.hybrid;
  const std::string w = "config (hybrid)";
  DIFFTX_CHECK(static_cast<int64_t>(h.layers.size()) == c.num_hidden_layers, w, ": ", h.layers.size(),
               " layer kinds for ", c.num_hidden_layers, " layers");
  DIFFTX_CHECK(c.attention == kernels::AttentionKind::diff && c.diff_subln && !c.lambda_init_constant && !c.lambda_init_shifted &&
                   c.hidden_act == MlpActivation::silu,
               w, ": the hybrid's attention is DIFF V1 with the head norm and the exp lambda_init schedule, and its MLP SwiGLU");
  DIFFTX_CHECK(h.sliding_window >= 1 && h.sliding_window <= (int64_t{1} << 30), w, ": 'sliding_window' must be in [1, 2^30], got ",
               h.sliding_window);
  DIFFTX_CHECK(h.layer_norm_eps > 0, w, ": 'layer_norm_eps' must be positive");
  const MambaConfig& m = h.mamba;
  DIFFTX_CHECK(m.d_state >= 1 && m.d_state <= 256, w, ": 'mamba_d_state' must be in [1, 256], got ", m.d_state);
  DIFFTX_CHECK(m.d_conv >= 1 && m.d_conv <= 64, w, ": 'mamba_d_conv' must be in [1, 64], got ", m.d_conv);
  DIFFTX_CHECK(m.expand >= 1 && m.expand <= 16, w, ": 'mamba_expand' must be in [1, 16], got ", m.expand);
  DIFFTX_CHECK(m.dt_rank >= 1 && m.dt_rank <= c.hidden_size, w, ": 'mamba_dt_rank' must be in [1, hidden_size], got ",
               m.dt_rank);
  bool memory = false, shared = false;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerKind kind = h.layers[l];
    DIFFTX_CHECK(kind != LayerKind::gmu || memory, w, ": GMU layer ", l, " comes before any memory_mamba layer");
    DIFFTX_CHECK(kind != LayerKind::cross_attention || shared, w, ": cross_attention layer ", l,
                 " comes before the shared full_attention layer ", h.shared_kv_layer);
    memory = memory || kind == LayerKind::memory_mamba;
    shared = shared || l == h.shared_kv_layer;
  }
  if (h.shared_kv_layer >= 0) {
    DIFFTX_CHECK(h.shared_kv_layer < c.num_hidden_layers, w, ": the shared layer ", h.shared_kv_layer,
                 " is past the last layer");
    const LayerKind shared = h.layers[h.shared_kv_layer];
    DIFFTX_CHECK(shared == LayerKind::full_attention, w, ": the shared layer ", h.shared_kv_layer, " is a ",
                 layer_kind_name(shared), " layer, not a full_attention one");
  }
}

}  // namespace

void ModelConfig::validate() const {
  const std::string w = "config";
  DIFFTX_CHECK(vocab_size > 0, w, ": 'vocab_size' must be positive");
  DIFFTX_CHECK(hidden_size > 0, w, ": 'hidden_size' must be positive");
  DIFFTX_CHECK(num_hidden_layers > 0, w, ": 'num_hidden_layers' must be positive");
  DIFFTX_CHECK(intermediate_size > 0, w, ": 'intermediate_size' must be positive");
  DIFFTX_CHECK(max_position_embeddings > 0, w, ": 'max_position_embeddings' must be positive");
  DIFFTX_CHECK(head_dim > 0 && head_dim % 2 == 0, w, ": 'head_dim' must be a positive even number (RoPE pairs), got ", head_dim);
  DIFFTX_CHECK(rms_norm_eps > 0, w, ": 'rms_norm_eps' must be positive");
  DIFFTX_CHECK(head_norm_epsilon() > 0, w, ": 'head_norm_eps' must be positive");
  DIFFTX_CHECK(grouped_ratio == 1 || attention == kernels::AttentionKind::diff_grouped, w,
               ": 'grouped_ratio' must be 1 unless 'attention' is \"diff_grouped\", got ", grouped_ratio);
  DIFFTX_CHECK(grouped_ratio >= 1 && grouped_ratio <= num_attention_heads && num_attention_heads % grouped_ratio == 0, w,
               ": 'grouped_ratio' (", grouped_ratio, ") must divide 'num_attention_heads' (", num_attention_heads, ")");
  DIFFTX_CHECK(rope_theta > 0, w, ": 'rope_theta' must be positive");
  DIFFTX_CHECK(num_key_value_heads > 0 && num_attention_heads % num_key_value_heads == 0, w,
               ": 'num_key_value_heads' (", num_key_value_heads, ") must divide 'num_attention_heads' (",
               num_attention_heads, ")");
  if (hybrid) validate_hybrid(*this);  // before the parameter count reads its sizes
  check_config_sizes(*this);
  attention_dims(1, 1).validate();
  if (lambda_init_constant)
    DIFFTX_CHECK(*lambda_init_constant >= 0 && *lambda_init_constant < 1, w,
                 ": 'lambda_init' constant must lie in [0, 1) so that 1 - lambda_init > 0, got ",
                 *lambda_init_constant);
}

int64_t default_intermediate_size(int64_t hidden_size) {
  // The bound of check_config_sizes, checked here because 8 D would overflow first.
  DIFFTX_CHECK(hidden_size > 0 && hidden_size <= (int64_t{1} << 16), "config: 'hidden_size' is ", hidden_size,
               ", outside [1, ", int64_t{1} << 16, "]");
  const int64_t f = (8 * hidden_size + 2) / 3;  // ceil(8D/3)
  return (f + 63) / 64 * 64;
}

kernels::RopeScaling rope_scaling_from_json(const json& j, const std::string& where) {
  kernels::RopeScaling s;
  if (j.is_null()) return s;
  const std::string key = where + ": key 'rope_scaling'";
  DIFFTX_CHECK(j.is_object(), key, " must be null or an object");
  DIFFTX_CHECK(!(j.contains("type") && j.contains("rope_type") && j.at("type") != j.at("rope_type")), key,
               " has 'type' and 'rope_type' that disagree");
  const json& type = j.contains("rope_type") ? j.at("rope_type") : j.contains("type") ? j.at("type") : json();
  DIFFTX_CHECK(type.is_string(), key, " needs 'rope_type' (\"default\", \"linear\" or \"llama3\")");
  const std::string name = type.get<std::string>();
  std::set<std::string> allowed = {"type", "rope_type"};
  auto number = [&](const char* field, double lowest) {
    allowed.insert(field);
    DIFFTX_CHECK(j.contains(field), key, " of type '", name, "' needs '", field, "'");
    const json& v = j.at(field);
    DIFFTX_CHECK(v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= lowest, key, ": '", field,
                 "' must be a finite number >= ", lowest);
    return v.get<double>();
  };
  if (name == "linear") {
    s.type = RopeScalingType::linear;
    s.factor = number("factor", 1.0);
  } else if (name == "llama3") {
    s.type = RopeScalingType::llama3;
    s.factor = number("factor", 1.0);
    s.low_freq_factor = number("low_freq_factor", 0.0);
    s.high_freq_factor = number("high_freq_factor", 0.0);
    s.original_max_position = number("original_max_position_embeddings", 1.0);
    DIFFTX_CHECK(s.original_max_position == std::floor(s.original_max_position) && s.original_max_position < 1e15,
                 key, ": 'original_max_position_embeddings' must be an integer");
    DIFFTX_CHECK(s.low_freq_factor > 0 && s.high_freq_factor > s.low_freq_factor, key,
                 ": llama3 needs 0 < low_freq_factor < high_freq_factor, got ", s.low_freq_factor, " and ",
                 s.high_freq_factor);
  } else {
    DIFFTX_CHECK(name == "default", key, ": RoPE scaling type '", name.substr(0, 64),
                 "' is not supported (supported: default, linear, llama3)");
  }
  for (const auto& [field, value] : j.items())
    DIFFTX_CHECK(allowed.count(field), key, ": unknown field '", field.substr(0, 64), "' for type '", name, "'");
  return s;
}

json rope_scaling_to_json(const kernels::RopeScaling& s) {
  switch (s.type) {
    case RopeScalingType::none: return nullptr;
    case RopeScalingType::linear: return {{"rope_type", "linear"}, {"factor", s.factor}};
    case RopeScalingType::llama3:
      return {{"rope_type", "llama3"},
              {"factor", s.factor},
              {"low_freq_factor", s.low_freq_factor},
              {"high_freq_factor", s.high_freq_factor},
              // An integer, as transformers writes (and validates) it.
              {"original_max_position_embeddings", static_cast<int64_t>(s.original_max_position)}};
  }
  return nullptr;
}

ModelConfig config_from_json(const json& j, const std::string& where) {
  DIFFTX_CHECK(j.is_object(), where, ": config must be a JSON object");
  for (const auto& [key, value] : j.items())
    DIFFTX_CHECK(kModelKeys.count(key) || kBookkeepingKeys.count(key), where, ": unknown key '", key, "'");
  check_bookkeeping(j, where);
  for (const char* key : {"model_type", "attention", "vocab_size", "hidden_size", "num_hidden_layers",
                          "num_attention_heads"})
    DIFFTX_CHECK(j.contains(key), where, ": missing key '", key, "'");

  DIFFTX_CHECK(j.at("model_type") == json("difftx"), where, ": key 'model_type' must be \"difftx\", got ",
               io::json_value_for_message(j.at("model_type")));
  DIFFTX_CHECK(j.at("attention").is_string(), where, ": key 'attention' must be a string");
  ModelConfig c;
  try {
    c.attention = kernels::attention_kind_from_name(j.at("attention").get<std::string>());
  } catch (const Error& e) {
    fail(where, ": key 'attention': ", e.what());
  }
  c.vocab_size = get_positive_int(j, "vocab_size", where);
  c.hidden_size = get_positive_int(j, "hidden_size", where);
  c.num_hidden_layers = get_positive_int(j, "num_hidden_layers", where);
  c.num_attention_heads = get_positive_int(j, "num_attention_heads", where);
  c.num_key_value_heads = j.contains("num_key_value_heads") ? get_positive_int(j, "num_key_value_heads", where)
                                                            : c.num_attention_heads;
  try {
    check_sizes_before_defaults(c);
  } catch (const Error& e) {
    fail(where, ": ", e.what());
  }
  // Default head width keeps the paper's parameter matching: the output heads fill D
  // (diff: h = D / 2d, docs/SPEC.md §2.2), i.e. out_width of a unit head width divides D.
  if (j.contains("grouped_ratio")) c.grouped_ratio = get_positive_int(j, "grouped_ratio", where);
  const int64_t per_head = kernels::AttentionVariant{c.attention, c.num_attention_heads, c.num_key_value_heads, 1, c.grouped_ratio}.out_width();
  if (j.contains("head_dim")) {
    c.head_dim = get_positive_int(j, "head_dim", where);
  } else {
    DIFFTX_CHECK(c.hidden_size % per_head == 0, where, ": key 'head_dim' is missing and hidden_size ",
                 c.hidden_size, " is not divisible by ", per_head);
    c.head_dim = c.hidden_size / per_head;
  }
  c.intermediate_size = j.contains("intermediate_size") ? get_positive_int(j, "intermediate_size", where)
                                                        : default_intermediate_size(c.hidden_size);
  c.max_position_embeddings =
      j.contains("max_position_embeddings") ? get_positive_int(j, "max_position_embeddings", where) : 2048;
  if (j.contains("rope_theta")) c.rope_theta = get_positive_number(j, "rope_theta", where);
  if (j.contains("rope_style"))
    c.rope_style = named_choice<kernels::RopeStyle>(j, "rope_style", {"interleaved", kernels::RopeStyle::interleaved},
                                           {"half", kernels::RopeStyle::half}, "\"interleaved\" or \"half\"", where);
  if (j.contains("rope_scaling")) c.rope_scaling = rope_scaling_from_json(j.at("rope_scaling"), where);
  if (j.contains("rms_norm_eps")) c.rms_norm_eps = get_positive_number(j, "rms_norm_eps", where);
  if (j.contains("tie_word_embeddings")) c.tie_word_embeddings = get_bool(j, "tie_word_embeddings", where);
  if (j.contains("lambda_init")) {
    const json& l = j.at("lambda_init");
    if (l.is_string()) {
      DIFFTX_CHECK(l == json("exp") || l == json("exp_shifted"), where,
                   ": key 'lambda_init' must be \"exp\", \"exp_shifted\" or a number, got ",
                   io::json_value_for_message(l));
      c.lambda_init_shifted = l == json("exp_shifted");
    } else {
      DIFFTX_CHECK(l.is_number(), where, ": key 'lambda_init' must be \"exp\", \"exp_shifted\" or a number, got ",
                   io::json_value_for_message(l));
      c.lambda_init_constant = l.get<double>();
    }
  }
  if (j.contains("diff_subln")) c.diff_subln = get_bool(j, "diff_subln", where);
  if (j.contains("head_norm_eps")) c.head_norm_eps = get_positive_number(j, "head_norm_eps", where);
  if (j.contains("hidden_act"))
    c.hidden_act = named_choice<MlpActivation>(j, "hidden_act", {"silu", MlpActivation::silu},
                                               {"poly_norm", MlpActivation::poly_norm},
                                               "\"silu\" (SwiGLU) or \"poly_norm\" (PolyNorm)", where);
  if (j.contains("hybrid")) c.hybrid = hybrid_from_json(j.at("hybrid"), where);
  try {
    c.validate();
  } catch (const Error& e) {
    fail(where, ": ", e.what());
  }
  return c;
}

ModelConfig config_from_file(const std::string& path) { return config_from_json(io::read_json_file(path), path); }

json config_to_json(const ModelConfig& c) {
  json j;
  j["model_type"] = "difftx";
  j["attention"] = kernels::attention_kind_name(c.attention);
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["num_key_value_heads"] = c.num_key_value_heads;
  j["head_dim"] = c.head_dim;
  j["intermediate_size"] = c.intermediate_size;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rope_theta"] = c.rope_theta;
  j["rope_style"] = c.rope_style == kernels::RopeStyle::half ? "half" : "interleaved";
  if (c.rope_scaling.type != RopeScalingType::none) j["rope_scaling"] = rope_scaling_to_json(c.rope_scaling);
  j["rms_norm_eps"] = c.rms_norm_eps;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  if (c.lambda_init_constant) j["lambda_init"] = *c.lambda_init_constant;
  else j["lambda_init"] = c.lambda_init_shifted ? "exp_shifted" : "exp";
  j["diff_subln"] = c.diff_subln;
  if (c.head_norm_eps) j["head_norm_eps"] = *c.head_norm_eps;
  if (c.attention == kernels::AttentionKind::diff_grouped) j["grouped_ratio"] = c.grouped_ratio;
  if (c.hidden_act == MlpActivation::poly_norm) j["hidden_act"] = "poly_norm";
  if (c.hybrid) j["hybrid"] = hybrid_to_json(*c.hybrid);
  return j;
}

}  // namespace difftx::model
