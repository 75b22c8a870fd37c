#include "model/formats/phi4flash_config.h"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/formats/config_keys.h"

namespace difftx::model {
namespace {

using nlohmann::json;

// Keys that do not change the forward pass at inference: bookkeeping, the remote code's names,
// initialisation, dropout (inactive at inference), token ids (checked for shape), and the RoPE
// base, which the config class carries although the model has no positional encoding.
const std::set<std::string> kHarmlessKeys = {
    "auto_map",     "initializer_range", "resid_pdrop", "embd_pdrop", "attention_dropout", "bos_token_id",
    "eos_token_id", "pad_token_id",      "rope_theta",  "max_position_embeddings"};

// Keys that change the math: read, or checked to hold the value difftx computes.
const std::set<std::string> kModelKeys = {
    "model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "hidden_act", "layer_norm_eps", "tie_word_embeddings", "sliding_window", "mb_per_layer",
    "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias",
    "mlp_bias", "lm_head_bias"};

constexpr int64_t kMostSize = int64_t{1} << 24;

// A dropout probability: any value in [0, 1) (none applies at inference).
void check_dropout(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return;
  const json& v = j.at(key);
  DIFFTX_CHECK(v.is_number() && v.get<double>() >= 0 && v.get<double>() < 1, where, ": key '", key,
               "' must be a dropout probability in [0, 1), got ", v.dump().substr(0, 64));
}

// `sliding_window`: an int, or the per-layer list the config class makes of it (save_pretrained
// writes that list: the window at odd layers below h, null elsewhere); class default 2047.
int64_t sliding_window(const json& j, int64_t layers, const std::string& where) {
  if (!j.contains("sliding_window") || j.at("sliding_window").is_null()) return 2047;
  const json& v = j.at("sliding_window");
  if (!v.is_array()) return positive_int(j, "sliding_window", where, int64_t{1} << 30);
  const std::vector<LayerKind> kinds = sambay_layers(layers);
  DIFFTX_CHECK(static_cast<int64_t>(v.size()) == layers, where, ": key 'sliding_window' lists ", v.size(),
               " layers; the model has ", layers);
  int64_t window = 0;
  for (int64_t l = 0; l < layers; ++l) {
    const bool sliding = kinds[l] == LayerKind::sliding_attention;
    const json& w = v[l];
    DIFFTX_CHECK(sliding ? w.is_number_integer() && w.get<int64_t>() >= 1 && (window == 0 || w.get<int64_t>() == window)
                         : w.is_null(),
                 where, ": key 'sliding_window' entry ", l, " is ", w.dump().substr(0, 32), "; SambaY has one window at ",
                 "the odd layers below num_hidden_layers / 2 and null elsewhere");
    if (sliding) window = w.get<int64_t>();
  }
  DIFFTX_CHECK(window >= 1 && window <= (int64_t{1} << 30), where, ": key 'sliding_window' has no window in [1, 2^30]");
  return window;
}

// Mamba's dt_rank "auto": ceil(hidden_size / 16).
int64_t auto_dt_rank(int64_t hidden_size) { return (hidden_size + 15) / 16; }

}  // namespace

bool is_phi4flash_model_type(const std::string& model_type) { return model_type == "phi4flash"; }

bool phi4flash_keeps_f32(const std::string& name) {
  for (const char* suffix : {".attn.A_log", ".attn.D", ".lambda_q1", ".lambda_k1", ".lambda_q2", ".lambda_k2"})
    if (name.ends_with(suffix)) return true;
  return false;
}

std::vector<LayerKind> sambay_layers(int64_t layers) {
  const int64_t h = layers / 2;
  std::vector<LayerKind> kinds(layers);
  for (int64_t l = 0; l < layers; ++l) {
    if (l < h) kinds[l] = l % 2 == 0 ? LayerKind::mamba : LayerKind::sliding_attention;
    else if (l == h) kinds[l] = LayerKind::memory_mamba;
    else if (l == h + 1) kinds[l] = LayerKind::full_attention;
    else kinds[l] = l % 2 == 0 ? LayerKind::gmu : LayerKind::cross_attention;
  }
  return kinds;
}

ModelConfig config_from_phi4flash(const json& j, const std::string& where) {
  DIFFTX_CHECK(j.is_object(), where, ": config must be a JSON object");
  for (const auto& [key, value] : j.items())
    DIFFTX_CHECK(kModelKeys.count(key) || kHarmlessKeys.count(key) || is_pretrained_config_key(key), where,
                 ": unknown key '", key.substr(0, 64),
                 "' in a phi4flash config (difftx runs a model only when it knows what every key means; ",
                 "docs/FORMATS.md \"Phi-4-mini-flash\" lists them)");
  if (j.contains("architectures"))
    DIFFTX_CHECK(j.at("architectures") == json::array({"Phi4FlashForCausalLM"}), where,
                 ": key 'architectures' must be [\"Phi4FlashForCausalLM\"] for model_type \"phi4flash\"");
  require_value(j, "hidden_act", "silu", "SwiGLU with silu", where);
  require_value(j, "mb_per_layer", 2, "SambaY's Mamba at every other layer", where);
  require_value(j, "mamba_conv_bias", true, "Mamba's conv with its bias", where);
  require_value(j, "mamba_proj_bias", false, "Mamba's and the GMU's in_proj and out_proj without biases", where);
  require_value(j, "mlp_bias", false, "fc1 and fc2 without biases", where);
  require_value(j, "lm_head_bias", false, "the head without a bias", where);
  for (const char* key : {"resid_pdrop", "embd_pdrop", "attention_dropout"}) check_dropout(j, key, where);
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) check_token_ids(j, key, where);

  ModelConfig c;
  read_sizes(j, c, where, kMostSize);
  const int64_t heads = positive_int(j, "num_attention_heads", where, kMostSize);
  // The config class's default is 4 (not the heads, as for Llama).
  const int64_t kv_heads = positive_int_or(j, "num_key_value_heads", 4, where, kMostSize);
  DIFFTX_CHECK(c.num_hidden_layers % 4 == 0, where, ": num_hidden_layers ", c.num_hidden_layers,
               " must be a multiple of 4 (SambaY's self- and cross-decoder halves, each in pairs of layers)");
  DIFFTX_CHECK(c.hidden_size % heads == 0, where, ": num_attention_heads ", heads, " must divide hidden_size ",
               c.hidden_size, " (head_dim = hidden_size / num_attention_heads)");
  DIFFTX_CHECK(heads % 2 == 0 && kv_heads % 2 == 0, where, ": num_attention_heads ", heads, " and num_key_value_heads ",
               kv_heads, " must be even (heads split into (q1, q2) and (k1, k2) pairs)");
  DIFFTX_CHECK((heads / 2) % (kv_heads / 2) == 0, where, ": the ", kv_heads / 2, " key/value pairs must divide the ",
               heads / 2, " query pairs");
  c.attention = kernels::AttentionKind::diff;
  c.num_attention_heads = heads / 2;
  c.num_key_value_heads = kv_heads / 2;
  c.head_dim = c.hidden_size / heads;
  c.head_norm_eps = 1e-5;  // subln's eps, fixed in the model code
  c.max_position_embeddings = positive_int_or(j, "max_position_embeddings", 4096, where, kMostSize);
  c.tie_word_embeddings = boolean_or(j, "tie_word_embeddings", true, where);  // the config class's default

  HybridConfig h;
  h.layers = sambay_layers(c.num_hidden_layers);
  h.shared_kv_layer = c.num_hidden_layers / 2 + 1;
  h.sliding_window = sliding_window(j, c.num_hidden_layers, where);
  h.layer_norm_eps = positive_number(j, "layer_norm_eps", 1e-5, where);
  h.mamba.d_state = positive_int_or(j, "mamba_d_state", 16, where, 256);  // the class defaults when absent
  h.mamba.d_conv = positive_int_or(j, "mamba_d_conv", 4, where, 64);
  h.mamba.expand = positive_int_or(j, "mamba_expand", 2, where, 16);
  const json rank = j.contains("mamba_dt_rank") && !j.at("mamba_dt_rank").is_null() ? j.at("mamba_dt_rank") : json("auto");
  if (rank == json("auto")) h.mamba.dt_rank = auto_dt_rank(c.hidden_size);
  else {
    DIFFTX_CHECK(rank.is_number_integer(), where, ": key 'mamba_dt_rank' must be \"auto\" or a positive integer, got ",
                 rank.dump().substr(0, 64));
    h.mamba.dt_rank = positive_int(j, "mamba_dt_rank", where, c.hidden_size);
  }
  c.hybrid = std::move(h);
  validate_config(c, where);
  return c;
}

json config_to_phi4flash(const ModelConfig& c, const std::string& torch_dtype) {
  DIFFTX_CHECK(c.hybrid, "internal: config_to_phi4flash of a model that is not a hybrid stack");
  const HybridConfig& h = *c.hybrid;
  const std::string what = "writing the hybrid as Phi4FlashForCausalLM: ";
  DIFFTX_CHECK(c.num_hidden_layers % 4 == 0 && h.layers == sambay_layers(c.num_hidden_layers) &&
                   h.shared_kv_layer == c.num_hidden_layers / 2 + 1,
               what, "its layers are not SambaY's layout for ", c.num_hidden_layers, " layers (Mamba and sliding ",
               "attention, the memory at L / 2, full attention at L / 2 + 1, then GMU and cross attention)");
  DIFFTX_CHECK(c.head_norm_epsilon() == 1e-5, what, "Phi4Flash fixes the head norm's eps to 1e-5; this model's is ",
               c.head_norm_epsilon());
  const int64_t heads = 2 * c.num_attention_heads, kv_heads = 2 * c.num_key_value_heads;
  DIFFTX_CHECK(c.hidden_size == heads * c.head_dim, what, "Phi4Flash's head_dim is hidden_size / num_attention_heads; ",
               "this model has ", heads, " heads of ", c.head_dim, " for hidden_size ", c.hidden_size);
  json j = common_keys(c);
  j.update({
      {"architectures", {"Phi4FlashForCausalLM"}},
      {"auto_map",
       {{"AutoConfig", "configuration_phi4flash.Phi4FlashConfig"},
        {"AutoModelForCausalLM", "modeling_phi4flash.Phi4FlashForCausalLM"}}},
      {"model_type", "phi4flash"},
      {"num_attention_heads", heads},
      {"num_key_value_heads", kv_heads},
      {"hidden_act", "silu"},
      {"layer_norm_eps", h.layer_norm_eps},
      {"sliding_window", h.sliding_window},
      {"mb_per_layer", 2},
      {"mamba_d_state", h.mamba.d_state},
      {"mamba_d_conv", h.mamba.d_conv},
      {"mamba_expand", h.mamba.expand},
      {"mamba_dt_rank", h.mamba.dt_rank == auto_dt_rank(c.hidden_size) ? json("auto") : json(h.mamba.dt_rank)},
      {"mamba_conv_bias", true},
      {"mamba_proj_bias", false},
      {"mlp_bias", false},
      {"lm_head_bias", false},
      {"attention_dropout", 0.0},
      {"resid_pdrop", 0.0},
      {"embd_pdrop", 0.0},
      {"initializer_range", 0.02},
      {"use_cache", true},
      {"torch_dtype", torch_dtype},
  });
  return j;
}

}  // namespace difftx::model
