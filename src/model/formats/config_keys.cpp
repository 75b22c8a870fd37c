#include "model/formats/config_keys.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/config.h"

namespace difftx::model {

using nlohmann::json;

bool is_pretrained_config_key(const std::string& key) {
  static const std::set<std::string> keys = {
      "architectures", "transformers_version", "torch_dtype", "dtype", "_name_or_path", "use_cache",
      "tokenizer_class", "return_dict", "output_hidden_states", "output_attentions", "torchscript", "use_bfloat16",
      "is_encoder_decoder", "is_decoder", "add_cross_attention", "tie_encoder_decoder", "id2label", "label2id",
      "problem_type", "finetuning_task", "prefix", "task_specific_params", "chunk_size_feed_forward",
      "cross_attention_hidden_size", "decoder_start_token_id", "sep_token_id", "tf_legacy_loss", "pruned_heads",
      "_attn_implementation", "_attn_implementation_autoset", "transformers.js_config",
      // transformers 4.x's generation defaults in config.json (generation_config.json supersedes them)
      "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
      "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty",
      "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences",
      "output_scores", "return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id",
      "remove_invalid_values", "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens"};
  return keys.count(key) > 0;
}

int64_t positive_int(const json& j, const char* key, const std::string& where, int64_t most) {
  DIFFTX_CHECK(j.contains(key), where, ": missing key '", key, "'");
  const json& v = j.at(key);
  const std::string bound = most < std::numeric_limits<int64_t>::max() ? " (at most " + std::to_string(most) + ")" : "";
  DIFFTX_CHECK(v.is_number_integer() && v.get<int64_t>() > 0 && v.get<int64_t>() <= most, where, ": key '", key,
               "' must be a positive integer", bound, ", got ", v.dump().substr(0, 64));
  return v.get<int64_t>();
}

int64_t positive_int_or(const json& j, const char* key, int64_t fallback, const std::string& where, int64_t most) {
  return j.contains(key) && !j.at(key).is_null() ? positive_int(j, key, where, most) : fallback;
}

bool boolean_or(const json& j, const char* key, bool fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  DIFFTX_CHECK(j.at(key).is_boolean(), where, ": key '", key, "' must be true or false");
  return j.at(key).get<bool>();
}

void check_token_ids(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return;
  const json& v = j.at(key);
  const auto id = [](const json& x) { return x.is_number_integer() && x.get<int64_t>() >= 0; };
  const bool ok = id(v) || (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), id));
  DIFFTX_CHECK(ok, where, ": key '", key, "' must be a token id or a non-empty list of them, got ",
               v.dump().substr(0, 64));
}

void read_sizes(const json& j, ModelConfig& c, const std::string& where, int64_t most) {
  c.vocab_size = positive_int(j, "vocab_size", where, most);
  c.hidden_size = positive_int(j, "hidden_size", where, most);
  c.intermediate_size = positive_int(j, "intermediate_size", where, most);
  c.num_hidden_layers = positive_int(j, "num_hidden_layers", where, most);
}

json common_keys(const ModelConfig& c) {
  return {{"vocab_size", c.vocab_size},
          {"hidden_size", c.hidden_size},
          {"intermediate_size", c.intermediate_size},
          {"num_hidden_layers", c.num_hidden_layers},
          {"max_position_embeddings", c.max_position_embeddings},
          {"tie_word_embeddings", c.tie_word_embeddings}};
}

double positive_number(const json& j, const char* key, double fallback, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  const json& v = j.at(key);
  DIFFTX_CHECK(v.is_number() && v.get<double>() > 0 && std::isfinite(v.get<double>()), where, ": key '", key,
               "' must be a positive number, got ", v.dump().substr(0, 64));
  return v.get<double>();
}

void require_value(const json& j, const char* key, const json& expected, const char* why, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return;
  const json& v = j.at(key);
  const bool same = v == expected || (expected.is_number() && v.is_number() && v.get<double>() == expected.get<double>());
  DIFFTX_CHECK(same, where, ": key '", key, "' is ", v.dump().substr(0, 64), "; difftx supports only ", expected.dump(),
               " (", why, ")");
}

void validate_config(const ModelConfig& c, const std::string& where) {
  try {
    c.validate();
  } catch (const Error& e) {
    fail(where, ": ", e.what());
  }
}

}  // namespace difftx::model
