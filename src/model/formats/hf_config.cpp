#include "model/formats/hf_config.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/formats/config_keys.h"
#include "model/formats/hf_layout.h"
#include "model/formats/motif_config.h"
#include "model/formats/phi4flash_config.h"

namespace difftx::model {
namespace {

using nlohmann::json;

// Keys of Llama and DiffLlama configs that do not change the forward pass (docs/FORMATS.md lists
// them), beside PretrainedConfig's own (is_pretrained_config_key). Token ids are checked for
// shape; everything else here is accepted as it is. `is_llama_config` and `rope_interleaved`
// (SmolLM2's) are flags no transformers Llama code reads.
const std::set<std::string> kHarmlessKeys = {"initializer_range", "pad_token_id",    "bos_token_id",
                                             "eos_token_id",      "lambda_std_dev",  "pretraining_tp",
                                             "quantization_config_version", "is_llama_config", "rope_interleaved"};

// Keys that change the math, each honoured (read below) or checked to have the value that
// difftx's forward pass computes.
const std::set<std::string> kModelKeys = {
    "model_type", "vocab_size", "hidden_size", "intermediate_size", "num_attention_heads",
    "num_key_value_heads", "head_dim", "num_hidden_layers", "rms_norm_eps", "rope_theta", "rope_scaling",
    "rope_parameters", "tie_word_embeddings", "max_position_embeddings", "hidden_act", "attention_bias",
    "mlp_bias", "attention_dropout", "mlp_dropout"};

// transformers 4.x writes rope_theta and rope_scaling; later versions a rope_parameters object
// holding both (rope_type "default" meaning no scaling).
void read_rope(const json& j, ModelConfig& c, const std::string& where) {
  c.rope_theta = positive_number(j, "rope_theta", 10000.0, where);
  if (j.contains("rope_scaling")) c.rope_scaling = rope_scaling_from_json(j.at("rope_scaling"), where);
  if (j.contains("rope_parameters") && !j.at("rope_parameters").is_null()) {
    DIFFTX_CHECK(!j.contains("rope_scaling") || j.at("rope_scaling").is_null(), where,
                 ": both 'rope_scaling' and 'rope_parameters' are set; keep one");
    json p = j.at("rope_parameters");
    DIFFTX_CHECK(p.is_object(), where, ": key 'rope_parameters' must be an object");
    c.rope_theta = positive_number(p, "rope_theta", c.rope_theta, where + ": rope_parameters");
    p.erase("rope_theta");
    c.rope_scaling = rope_scaling_from_json(p, where);
  }
}

}  // namespace

bool hf_architecture_of(const std::string& model_type, HfArchitecture* out) {
  if (model_type == "llama") *out = HfArchitecture::llama;
  else if (model_type == "diffllama") *out = HfArchitecture::diffllama;
  else if (is_motif_model_type(model_type)) *out = HfArchitecture::motif;
  else if (is_phi4flash_model_type(model_type)) *out = HfArchitecture::phi4flash;
  else return false;
  return true;
}

HfConfig config_from_hf(const json& j, const std::string& where) {
  DIFFTX_CHECK(j.is_object(), where, ": config must be a JSON object");
  if (j.contains("model_type") && j.at("model_type").is_string() &&
      is_motif_model_type(j.at("model_type").get<std::string>())) {
    HfConfig out{HfArchitecture::motif, {}, config_from_motif(j, where), {}};
    out.hf = {out.model.attention_variant().maps(), 2 * out.model.num_key_value_heads, out.model.head_dim};
    return out;  // Motif's rows are difftx's (motif_config.h): no row maps
  }
  if (j.contains("model_type") && j.at("model_type") == nlohmann::json("phi4flash")) {
    HfConfig out{HfArchitecture::phi4flash, {}, config_from_phi4flash(j, where), {}};
    out.hf = {out.model.attention_variant().maps(), 2 * out.model.num_key_value_heads, out.model.head_dim};
    return out;  // Hugging Face's names and rows are the hybrid schema's (parameters.cpp)
  }
  for (const auto& [key, value] : j.items())
    DIFFTX_CHECK(kModelKeys.count(key) || kHarmlessKeys.count(key) || is_pretrained_config_key(key) ||
                     (key == "sliding_window" && value.is_null()),
                 where, ": unknown key '", key.substr(0, 64),
                 "' (difftx runs a model only when it knows what every key means; docs/FORMATS.md lists them)");
  HfConfig out;
  DIFFTX_CHECK(j.contains("model_type") && j.at("model_type").is_string() &&
                   hf_architecture_of(j.at("model_type").get<std::string>(), &out.architecture),
               where, ": key 'model_type' must be \"llama\", \"diffllama\", \"Motif\", \"motif\" or \"phi4flash\"");
  const bool diff = out.architecture == HfArchitecture::diffllama;
  require_value(j, "hidden_act", "silu", "SwiGLU with silu", where);
  require_value(j, "attention_bias", false, "no biases", where);
  require_value(j, "mlp_bias", false, "no biases", where);
  require_value(j, "attention_dropout", 0.0, "no dropout", where);
  require_value(j, "mlp_dropout", 0.0, "no dropout", where);
  check_token_ids(j, "bos_token_id", where);
  check_token_ids(j, "eos_token_id", where);

  ModelConfig& c = out.model;
  c.attention = diff ? kernels::AttentionKind::diff : kernels::AttentionKind::baseline;
  c.rope_style = kernels::RopeStyle::half;  // transformers' rotate_half
  read_sizes(j, c, where);
  out.hf.heads = positive_int(j, "num_attention_heads", where);
  out.hf.kv_heads = positive_int_or(j, "num_key_value_heads", out.hf.heads, where);
  if (j.contains("head_dim") && !j.at("head_dim").is_null()) {
    out.hf.head_dim = positive_int(j, "head_dim", where);
  } else {
    DIFFTX_CHECK(c.hidden_size % out.hf.heads == 0, where, ": no 'head_dim', and hidden_size ", c.hidden_size,
                 " is not a multiple of num_attention_heads ", out.hf.heads);
    out.hf.head_dim = c.hidden_size / out.hf.heads;
  }
  DIFFTX_CHECK(out.hf.heads % out.hf.kv_heads == 0, where, ": num_key_value_heads (", out.hf.kv_heads,
               ") must divide num_attention_heads (", out.hf.heads, ")");
  c.head_dim = out.hf.head_dim;
  // Bounded before the DiffLlama layout is worked out from them (validate() bounds the rest).
  DIFFTX_CHECK(out.hf.heads <= (int64_t{1} << 13) && out.hf.head_dim <= (int64_t{1} << 12), where,
               ": num_attention_heads ", out.hf.heads, " or head_dim ", out.hf.head_dim,
               " is above the largest supported (8192, 4096)");
  if (diff) {
    try {
      out.layout = diffllama_import_layout(out.hf.heads, out.hf.kv_heads, out.hf.head_dim);
      c.num_attention_heads = out.layout.heads;
      c.num_key_value_heads = out.layout.kv_heads;
    } catch (const Error& e) {
      fail(where, ": ", e.what());
    }
  } else {
    c.num_attention_heads = out.hf.heads;
    c.num_key_value_heads = out.hf.kv_heads;
  }
  c.max_position_embeddings = j.contains("max_position_embeddings")
                                  ? positive_int(j, "max_position_embeddings", where) : 2048;
  c.rms_norm_eps = positive_number(j, "rms_norm_eps", diff ? 1e-5 : 1e-6, where);  // the classes' defaults
  read_rope(j, c, where);
  c.tie_word_embeddings = boolean_or(j, "tie_word_embeddings", false, where);  // both classes' default
  c.lambda_init_constant.reset();  // DiffLlama: 0.8 - 0.6 exp(-0.3 layer_idx), the exp schedule
  c.diff_subln = true;             // its head norm, without a gain (loaded as a gain of ones)
  validate_config(c, where);
  return out;
}

json config_to_hf(const ModelConfig& c, const std::string& torch_dtype) {
  if (c.hybrid) return config_to_phi4flash(c, torch_dtype);
  if (is_motif_config(c)) return config_to_motif(c, torch_dtype);
  DIFFTX_CHECK(c.attention != kernels::AttentionKind::diff2,
               "DIFF V2 (attention \"diff2\") has no Hugging Face model class; ",
               "convert it to difftx's own format instead");
  DIFFTX_CHECK(c.attention != kernels::AttentionKind::diff_grouped, "grouped differential attention (attention \"diff_grouped\") ",
               "without Motif's PolyNorm MLP has no Hugging Face class; convert it to difftx's own format instead");
  const bool diff = c.attention == kernels::AttentionKind::diff;
  if (diff) {
    DIFFTX_CHECK(!c.lambda_init_shifted && !c.head_norm_eps, "DiffLlama fixes lambda_init to 0.8 - 0.6 exp(-0.3 l) ",
                 "and the head norm's eps to rms_norm_eps; this model differs (lambda_init \"exp_shifted\" or ",
                 "head_norm_eps), so it cannot be written as DiffLlama");
    DIFFTX_CHECK(!c.lambda_init_constant, "DiffLlama fixes lambda_init to 0.8 - 0.6 exp(-0.3 l); a model trained with ",
                 "the constant lambda_init ", c.lambda_init_constant.value_or(0), " cannot be written as DiffLlama");
    DIFFTX_CHECK(c.diff_subln, "DiffLlama always applies the head norm; a model trained without it (diff_subln false) ",
                 "cannot be written as DiffLlama");
  }
  const int64_t heads = diff ? 2 * c.num_attention_heads : c.num_attention_heads;
  const int64_t kv_heads = diff ? 2 * c.num_key_value_heads : c.num_key_value_heads;
  json j = common_keys(c);
  j.update({
      {"architectures", {diff ? "DiffLlamaForCausalLM" : "LlamaForCausalLM"}},
      {"model_type", diff ? "diffllama" : "llama"},
      {"num_attention_heads", heads},
      {"num_key_value_heads", kv_heads},
      {"head_dim", c.head_dim},
      {"hidden_act", "silu"},
      {"rms_norm_eps", c.rms_norm_eps},
      {"rope_theta", c.rope_theta},
      {"rope_scaling", rope_scaling_to_json(c.rope_scaling)},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"initializer_range", 0.02},
      {"use_cache", true},
      {"torch_dtype", torch_dtype},
  });
  if (diff) j["lambda_std_dev"] = 0.1;
  else j["mlp_bias"] = false;
  return j;
}

}  // namespace difftx::model
