// Reading a parsed JSON document field by field, with errors that name the file and the key
// path ("results.json: models[1].train.curve[3].loss: expected a number, got \"x\"").
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace difftx::io {

class JsonField {
 public:
  // `source` names the document in errors (usually its file); the field borrows `value`.
  JsonField(const nlohmann::json& value, std::string source, std::string path = "");

  const nlohmann::json& value() const { return *value_; }
  // "SOURCE: PATH" (or "SOURCE" at the root), for messages.
  std::string where() const;

  // A key of this object (its value may be null): Error when this is not an object or the key
  // is missing.
  JsonField at(std::string_view key) const;
  // A key that may be absent; absent and null both give nullopt.
  std::optional<JsonField> find(std::string_view key) const;
  // Array access: size() is an Error unless this is an array.
  size_t size() const;
  JsonField operator[](size_t i) const;

  // Typed values; Error naming the path and the value found otherwise.
  double number() const;    // null reads as NaN (results write NaN as null)
  int64_t integer() const;  // an integral number (2e6 is accepted)
  std::string string() const;
  void expect_object() const;

 private:
  [[noreturn]] void wrong_type(const char* expected) const;

  const nlohmann::json* value_;
  std::string source_;
  std::string path_;
};

}  // namespace difftx::io
