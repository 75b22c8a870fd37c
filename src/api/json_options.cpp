#include "api/json_options.h"

#include <cmath>

#include "core/error.h"
#include "io/json_file.h"

namespace difftx::api {

JsonOptions::JsonOptions(const char* text, std::string what) : what_(std::move(what)) {
  options_ = nlohmann::json::object();
  if (text == nullptr || text[0] == '\0') return;
  options_ = io::parse_json_text(text, what_);  // bounded depth, unique keys
  DIFFTX_CHECK(options_.is_object(), what_, ": expected a JSON object, got ", options_.type_name());
}

const nlohmann::json* JsonOptions::find(const std::string& key) {
  used_.insert(key);
  const auto it = options_.find(key);
  return it == options_.end() || it->is_null() ? nullptr : &*it;
}

int64_t JsonOptions::integer_value(const std::string& key, const nlohmann::json& v, int64_t min, int64_t max) const {
  int64_t x = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) x = INT64_MAX;
    else x = v.get<int64_t>();
  } else {
    fail(what_, ": '", key, "' must be an integer, got ", io::json_value_for_message(v));
  }
  DIFFTX_CHECK(x >= min && x <= max, what_, ": '", key, "' ", x, " is outside [", min, ", ", max, "]");
  return x;
}

double JsonOptions::number_value(const std::string& key, const nlohmann::json& v, double min, double max) const {
  DIFFTX_CHECK(v.is_number(), what_, ": '", key, "' must be a number, got ", io::json_value_for_message(v));
  const double x = v.get<double>();
  DIFFTX_CHECK(std::isfinite(x) && x >= min && x <= max, what_, ": '", key, "' ", x, " is outside [", min, ", ", max,
               "]");
  return x;
}

int64_t JsonOptions::integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) {
  const nlohmann::json* v = find(key);
  return v ? integer_value(key, *v, min, max) : fallback;
}

uint64_t JsonOptions::seed(const std::string& key, uint64_t fallback) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  return static_cast<uint64_t>(integer_value(key, *v, INT64_MIN, INT64_MAX));
}

double JsonOptions::number(const std::string& key, double fallback, double min, double max) {
  const nlohmann::json* v = find(key);
  return v ? number_value(key, *v, min, max) : fallback;
}

std::string JsonOptions::string(const std::string& key, const std::string& fallback) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  DIFFTX_CHECK(v->is_string(), what_, ": '", key, "' must be a string, got ", io::json_value_for_message(*v));
  return v->get<std::string>();
}

template <typename T>
std::vector<T> JsonOptions::list(const std::string& key, const std::vector<T>& fallback, T min, T max, const char* kind,
                                 T (JsonOptions::*value)(const std::string&, const nlohmann::json&, T, T) const) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  DIFFTX_CHECK(v->is_array() && !v->empty(), what_, ": '", key, "' must be a non-empty list of ", kind, ", got ",
               io::json_value_for_message(*v));
  std::vector<T> out;
  for (const nlohmann::json& x : *v) out.push_back((this->*value)(key, x, min, max));
  return out;
}

std::vector<int64_t> JsonOptions::integers(const std::string& key, const std::vector<int64_t>& fallback, int64_t min,
                                           int64_t max) {
  return list(key, fallback, min, max, "integers", &JsonOptions::integer_value);
}

std::vector<double> JsonOptions::numbers(const std::string& key, const std::vector<double>& fallback, double min,
                                         double max) {
  return list(key, fallback, min, max, "numbers", &JsonOptions::number_value);
}

void JsonOptions::finish() const {
  std::string known;
  for (const std::string& key : used_) {
    if (!known.empty()) known += ", ";
    known += key;
  }
  for (const auto& [key, value] : options_.items())
    DIFFTX_CHECK(used_.count(key), what_, ": unknown option '", key.substr(0, 64), "' (known: ", known, ")");
}

}  // namespace difftx::api
