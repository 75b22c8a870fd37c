// Typed reads of a request body's fields. A null field counts as absent (OpenAI's clients send
// nulls for unset options); a wrong type or a value out of range is a 400 naming the field.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace difftx::serve {

struct Range {
  double min, max;
  bool min_excluded = false;
};

class Fields {
 public:
  explicit Fields(const nlohmann::json& body);  // body must be an object
  const nlohmann::json* find(const std::string& key) const;  // nullptr when absent or null
  std::optional<int64_t> integer(const std::string& key, int64_t min, int64_t max) const;
  std::optional<double> number(const std::string& key, Range range) const;
  std::optional<bool> boolean(const std::string& key) const;
  std::optional<std::string> string(const std::string& key) const;

 private:
  const nlohmann::json& body_;
};

// One value as an integer in [min, max] (an integral float such as 2.0 counts); nullopt otherwise.
std::optional<int64_t> json_integer(const nlohmann::json& value, int64_t min, int64_t max);
// A JSON type for messages: "a string", "an array", ...
std::string json_type_name(const nlohmann::json& value);
// An object's "type" (an input item's, a content block's, a tool's): `fallback` where the value is
// no object or its type is absent or null; a type that is no string as its JSON text, which no
// caller knows, so that it is a 400 naming it rather than a failed read.
std::string type_field(const nlohmann::ordered_json& object, const std::string& fallback = "");
// An item's or a block's required string field: a 400 naming `param` ("WHERE needs a string 'KEY'")
// where it is absent or no string.
std::string required_string(const nlohmann::ordered_json& object, const char* key, const std::string& param,
                            const std::string& where);

}  // namespace difftx::serve
