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
// A finite number > 0, or `fallback` when the key is absent or null.
double positive_number(const nlohmann::json& j, const char* key, double fallback, const std::string& where);
// A key whose only supported value is `expected` (or absent / null); `why` says what else would mean.
void require_value(const nlohmann::json& j, const char* key, const nlohmann::json& expected, const char* why,
                   const std::string& where);
// ModelConfig::validate, its error prefixed by `where`: the adapters' last check of what they read.
void validate_config(const ModelConfig& c, const std::string& where);

}  // namespace difftx::model
