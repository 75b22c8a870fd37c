#include "io/json_field.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "io/json_file.h"

namespace difftx::io {

JsonField::JsonField(const nlohmann::json& value, std::string source, std::string path)
    : value_(&value), source_(std::move(source)), path_(std::move(path)) {}

std::string JsonField::where() const { return path_.empty() ? source_ : source_ + ": " + path_; }

void JsonField::wrong_type(const char* expected) const {
  fail(where(), ": expected ", expected, ", got ", json_value_for_message(*value_));
}

void JsonField::expect_object() const {
  if (!value_->is_object()) wrong_type("an object");
}

JsonField JsonField::at(std::string_view key) const {
  expect_object();
  const auto it = value_->find(std::string(key));
  if (it == value_->end()) fail(where(), ": missing key '", key, "'");
  return JsonField(*it, source_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  expect_object();
  const auto it = value_->find(std::string(key));
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return at(key);
}

size_t JsonField::size() const {
  if (!value_->is_array()) wrong_type("an array");
  return value_->size();
}

JsonField JsonField::operator[](size_t i) const {
  DIFFTX_CHECK(i < size(), where(), ": index ", i, " is out of range (", value_->size(), " elements)");
  return JsonField((*value_)[i], source_, path_ + "[" + std::to_string(i) + "]");
}

double JsonField::number() const {
  if (value_->is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!value_->is_number()) wrong_type("a number");
  return value_->get<double>();
}

int64_t JsonField::integer() const {
  if (value_->is_number_integer()) return value_->get<int64_t>();
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<int64_t>(v);
  }
  wrong_type("an integer");
}

std::string JsonField::string() const {
  if (!value_->is_string()) wrong_type("a string");
  return value_->get<std::string>();
}

}  // namespace difftx::io
