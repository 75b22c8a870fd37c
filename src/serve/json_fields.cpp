#include "serve/json_fields.h"

#include <cmath>

#include "serve/api_error.h"

namespace difftx::serve {

using nlohmann::json;

std::string json_type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    default: return "a number";
  }
}

std::optional<int64_t> json_integer(const json& value, int64_t min, int64_t max) {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    const auto v = static_cast<int64_t>(u);
    return v >= min && v <= max ? std::optional(v) : std::nullopt;
  }
  if (value.is_number_integer()) {
    const auto v = value.get<int64_t>();
    return v >= min && v <= max ? std::optional(v) : std::nullopt;
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    // 2^63 first: a max near INT64_MAX rounds up to it as a double, and 2^63 has no int64.
    if (!std::isfinite(d) || d != std::floor(d) || d >= 0x1p63 || d < static_cast<double>(min) ||
        d > static_cast<double>(max))
      return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

Fields::Fields(const json& body) : body_(body) {
  if (!body.is_object())
    throw ApiError(400, "the request body must be a JSON object, not " + json_type_name(body), "", "invalid_json");
}

const json* Fields::find(const std::string& key) const {
  const auto it = body_.find(key);
  return it == body_.end() || it->is_null() ? nullptr : &*it;
}

std::optional<int64_t> Fields::integer(const std::string& key, int64_t min, int64_t max) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) bad_param(key, "'" + key + "' must be an integer, not " + json_type_name(*v));
  const auto i = json_integer(*v, min, max);
  if (!i) bad_param(key, concat("'", key, "' must be an integer in [", min, ", ", max, "], not ", v->dump()));
  return i;
}

std::optional<double> Fields::number(const std::string& key, Range range) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) bad_param(key, "'" + key + "' must be a number, not " + json_type_name(*v));
  const double d = v->get<double>();
  const bool low = range.min_excluded ? d <= range.min : d < range.min;
  if (!std::isfinite(d) || low || d > range.max)
    bad_param(key, concat("'", key, "' must be a number in ", range.min_excluded ? "(" : "[", range.min, ", ",
                          range.max, "], not ", v->dump()));
  return d;
}

std::optional<bool> Fields::boolean(const std::string& key) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) bad_param(key, "'" + key + "' must be a boolean, not " + json_type_name(*v));
  return v->get<bool>();
}

std::string type_field(const nlohmann::ordered_json& object, const std::string& fallback) {
  if (!object.is_object()) return fallback;
  const auto it = object.find("type");
  if (it == object.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string required_string(const nlohmann::ordered_json& object, const char* key, const std::string& param,
                            const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) bad_param(param, where + " needs a string '" + key + "'");
  return it->get<std::string>();
}

std::optional<std::string> Fields::string(const std::string& key) const {
  const json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) bad_param(key, "'" + key + "' must be a string, not " + json_type_name(*v));
  return v->get<std::string>();
}

}  // namespace difftx::serve
