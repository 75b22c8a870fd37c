#include "model/formats/config_keys.h"

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
