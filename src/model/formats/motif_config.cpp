#include "model/formats/motif_config.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/formats/config_keys.h"

namespace difftx::model {
namespace {

using nlohmann::json;

// Keys that do not change the forward pass (docs/FORMATS.md "Motif" lists them). `auto_map`
// names the remote code, `fused_rope` and `max_window_layers` only pick kernels or matter with
// sliding windows (refused below).
const std::set<std::string> kHarmlessKeys = {"initializer_range", "pad_token_id", "bos_token_id",     "eos_token_id",
                                             "auto_map",          "fused_rope",   "max_window_layers"};

// Keys that change the math: read, or checked to hold the value difftx computes.
const std::set<std::string> kModelKeys = {
    "model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "num_noise_heads", "k_ratio", "grouped_ratio", "rms_norm_eps",
    "attn_rms_norm_eps", "hidden_act", "rope_theta", "rope_scaling", "tie_word_embeddings",
    "max_position_embeddings", "use_bias", "attention_bias", "mlp_bias", "qkv_bias", "attention_dropout", "sliding_window",
    "use_sliding_window", "expanded"};

// Sizes are bounded, so that products of them stay far from 64 bits.
constexpr int64_t kMostSize = int64_t{1} << 24;

}  // namespace

bool is_motif_model_type(const std::string& model_type) { return model_type == "Motif" || model_type == "motif"; }

ModelConfig config_from_motif(const json& j, const std::string& where) {
  DIFFTX_CHECK(j.is_object(), where, ": config must be a JSON object");
  for (const auto& [key, value] : j.items())
    DIFFTX_CHECK(kModelKeys.count(key) || kHarmlessKeys.count(key) || is_pretrained_config_key(key), where,
                 ": unknown key '", key.substr(0, 64),
                 "' in a Motif config (difftx runs a model only when it knows what every key means; docs/FORMATS.md "
                 "\"Motif\" lists them)");
  if (j.contains("architectures"))
    DIFFTX_CHECK(j.at("architectures") == json::array({"MotifForCausalLM"}), where,
                 ": key 'architectures' must be [\"MotifForCausalLM\"] for model_type ", j.at("model_type").dump());
  require_value(j, "hidden_act", "poly_norm", "Motif's PolyNorm MLP", where);
  require_value(j, "k_ratio", 1, "key/value heads in (k1, k2) pairs", where);
  require_value(j, "use_bias", false, "no biases", where);
  for (const char* key : {"attention_bias", "mlp_bias", "qkv_bias"}) require_value(j, key, false, "no biases", where);
  require_value(j, "attention_dropout", 0.0, "no dropout", where);
  require_value(j, "use_sliding_window", false, "full causal attention", where);
  require_value(j, "sliding_window", json(), "full causal attention", where);
  require_value(j, "expanded", false, "the checkpoints' plain layers", where);

  ModelConfig c;
  c.hidden_act = MlpActivation::poly_norm;
  c.rope_style = kernels::RopeStyle::half;  // rotate-half over the whole head
  c.lambda_init_shifted = true;    // 0.8 - 0.6 exp(-0.3 (l - 1)), 0-based l
  c.diff_subln = true;
  read_sizes(j, c, where, kMostSize);
  const int64_t heads = positive_int(j, "num_attention_heads", where, kMostSize);
  const int64_t kv_heads = positive_int_or(j, "num_key_value_heads", heads, where, kMostSize);
  const bool grouped = j.contains("num_noise_heads") && !j.at("num_noise_heads").is_null();
  if (j.contains("head_dim") && !j.at("head_dim").is_null()) {
    c.head_dim = positive_int(j, "head_dim", where, kMostSize);
  } else {
    // Motif's vLLM fork (motif.py, MotifAttention) raises here: head_dim is not derived for GDA.
    DIFFTX_CHECK(!grouped, where, ": key 'head_dim' is missing; Motif's code requires it when num_noise_heads is set");
    DIFFTX_CHECK(c.hidden_size % heads == 0, where, ": no 'head_dim', and hidden_size ", c.hidden_size,
                 " is not a multiple of num_attention_heads ", heads);
    c.head_dim = c.hidden_size / heads;
  }
  DIFFTX_CHECK(kv_heads % 2 == 0, where, ": num_key_value_heads ", kv_heads,
               " must be even (Motif pairs kv heads 2m, 2m+1 as k1/v1 and k2/v2)");
  c.num_key_value_heads = kv_heads / 2;
  if (grouped) {  // grouped (GDA)
    const int64_t noise = positive_int(j, "num_noise_heads", where, kMostSize);
    DIFFTX_CHECK(heads % noise == 0 && heads / noise >= 2, where, ": num_attention_heads ", heads,
                 " must be a multiple (at least 2) of num_noise_heads ", noise, " (groups of r signal heads and a noise head)");
    const int64_t r = heads / noise - 1;
    if (j.contains("grouped_ratio") && !j.at("grouped_ratio").is_null()) {
      const json& g = j.at("grouped_ratio");
      DIFFTX_CHECK(g.is_number(), where, ": key 'grouped_ratio' must be a number, got ", g.dump().substr(0, 64));
      DIFFTX_CHECK(g.get<double>() == static_cast<double>(r), where, ": key 'grouped_ratio' is ", g.dump().substr(0, 64),
                   ", but the heads give r = (", heads, " - ", noise, ") / ", noise, " = ", r);
    }
    c.attention = kernels::AttentionKind::diff_grouped;
    c.grouped_ratio = r;
    c.num_attention_heads = noise * r;
  } else {  // plain DIFF (2.6B): adjacent query heads paired
    DIFFTX_CHECK(heads % 2 == 0, where, ": num_attention_heads ", heads, " must be even without num_noise_heads (pairs)");
    require_value(j, "grouped_ratio", 1, "without num_noise_heads the heads are pairs", where);
    c.attention = kernels::AttentionKind::diff;
    c.num_attention_heads = heads / 2;
  }
  c.max_position_embeddings = j.contains("max_position_embeddings")
                                  ? positive_int(j, "max_position_embeddings", where, kMostSize) : 2048;
  c.rms_norm_eps = positive_number(j, "rms_norm_eps", 1e-6, where);
  c.head_norm_eps = positive_number(j, "attn_rms_norm_eps", 1e-5, where);
  c.rope_theta = positive_number(j, "rope_theta", 10000.0, where);
  if (j.contains("rope_scaling")) c.rope_scaling = rope_scaling_from_json(j.at("rope_scaling"), where);
  c.tie_word_embeddings = boolean_or(j, "tie_word_embeddings", false, where);
  validate_config(c, where);
  return c;
}

bool is_motif_config(const ModelConfig& c) { return c.hidden_act == MlpActivation::poly_norm; }

json config_to_motif(const ModelConfig& c, const std::string& torch_dtype) {
  const kernels::AttentionVariant a = c.attention_variant();
  DIFFTX_CHECK(a.v1_layout() && c.hidden_act == MlpActivation::poly_norm && c.lambda_init_shifted &&
                   !c.lambda_init_constant && c.diff_subln,
               "MotifForCausalLM holds differential attention (diff or diff_grouped) with the head norm, PolyNorm and ",
               "the lambda_init schedule \"exp_shifted\"; this model (attention ", kernels::attention_kind_name(c.attention),
               ") differs, so it cannot be written as Motif");
  const bool grouped = c.attention == kernels::AttentionKind::diff_grouped;
  json j = common_keys(c);
  j.update({
      {"architectures", {"MotifForCausalLM"}},
      {"model_type", "Motif"},
      {"num_attention_heads", a.maps()},
      {"num_key_value_heads", 2 * c.num_key_value_heads},
      {"head_dim", c.head_dim},
      {"hidden_act", "poly_norm"},
      {"rms_norm_eps", c.rms_norm_eps},
      {"attn_rms_norm_eps", c.head_norm_epsilon()},
      {"rope_theta", c.rope_theta},
      {"rope_scaling", rope_scaling_to_json(c.rope_scaling)},
      {"use_bias", false},
      {"torch_dtype", torch_dtype},
  });
  if (grouped) {
    j["num_noise_heads"] = a.noise_maps();
    j["grouped_ratio"] = c.grouped_ratio;
    j["k_ratio"] = 1;
  }
  return j;
}

}  // namespace difftx::model
