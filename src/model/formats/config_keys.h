// Checked reads of a Hugging Face config.json's keys, shared by the adapters (hf_config.cpp,
// motif_config.cpp, phi4flash_config.cpp) and difftx's `hybrid` object (model/hybrid_config_json.cpp):
// every error names the key, the file (`where`) and the value found.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace difftx::model {

struct ModelConfig;

// A required integer in [1, most].
int64_t positive_int(const nlohmann::json& j, const char* key, const std::string& where,
                     int64_t most = std::numeric_limits<int64_t>::max());
// An integer in [1, most], or `fallback` when the key is absent or null.
int64_t positive_int_or(const nlohmann::json& j, const char* key, int64_t fallback, const std::string& where,
                        int64_t most = std::numeric_limits<int64_t>::max());
// true or false, or `fallback` when the key is absent.
bool boolean_or(const nlohmann::json& j, const char* key, bool fallback, const std::string& where);
// A token id or a non-empty list of them (bos_token_id, eos_token_id, ...), when present and not null.
void check_token_ids(const nlohmann::json& j, const char* key, const std::string& where);
// The sizes every config.json holds: vocab_size, hidden_size, intermediate_size and
// num_hidden_layers, each in [1, most], into c; and the keys every writer takes from c as they are
// (those sizes, max_position_embeddings and tie_word_embeddings).
void read_sizes(const nlohmann::json& j, ModelConfig& c, const std::string& where,
                int64_t most = std::numeric_limits<int64_t>::max());
nlohmann::json common_keys(const ModelConfig& c);
// A finite number > 0, or `fallback` when the key is absent or null.
double positive_number(const nlohmann::json& j, const char* key, double fallback, const std::string& where);
// A key whose only supported value is `expected` (or absent / null); `why` says what else would mean.
void require_value(const nlohmann::json& j, const char* key, const nlohmann::json& expected, const char* why,
                   const std::string& where);
// Whether a key is transformers' PretrainedConfig's own, which no model's forward pass reads:
// bookkeeping (architectures, torch_dtype, ...), the generation defaults transformers 4.x kept in
// config.json (max_length, do_sample, num_beams, ...) and what loaders add
// (_attn_implementation_autoset, transformers.js_config).
bool is_pretrained_config_key(const std::string& key);
// ModelConfig::validate, its error prefixed by `where`: the adapters' last check of what they read.
void validate_config(const ModelConfig& c, const std::string& where);

}  // namespace difftx::model
