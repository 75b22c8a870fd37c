#include "model/formats/config_keys.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/config.h"

namespace difftx::model {

using nlohmann::json;

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
