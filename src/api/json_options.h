// Options given as the text of a JSON object (the C API's analyses): typed reads by name, each
// with its default and its range; finish() rejects a key no read asked for. Errors name the key,
// the value and what was expected.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checked.h"

namespace difftx::api {

class JsonOptions {
 public:
  // text null or empty: no options. `what` starts every error ("niah options").
  JsonOptions(const char* text, std::string what);

  int64_t integer(const std::string& key, int64_t fallback, int64_t min, int64_t max);
  uint64_t seed(const std::string& key, uint64_t fallback);  // any integer, taken as its 64 bits
  double number(const std::string& key, double fallback, double min, double max);
  std::string string(const std::string& key, const std::string& fallback);
  // A non-empty list.
  std::vector<int64_t> integers(const std::string& key, const std::vector<int64_t>& fallback, int64_t min, int64_t max);
  std::vector<double> numbers(const std::string& key, const std::vector<double>& fallback, double min, double max);
  void finish() const;

 private:
  const nlohmann::json* find(const std::string& key);
  int64_t integer_value(const std::string& key, const nlohmann::json& v, int64_t min, int64_t max) const;
  double number_value(const std::string& key, const nlohmann::json& v, double min, double max) const;
  // A non-empty list of `kind` ("integers"), each element read by `value`.
  template <typename T>
  std::vector<T> list(const std::string& key, const std::vector<T>& fallback, T min, T max, const char* kind,
                      T (JsonOptions::*value)(const std::string&, const nlohmann::json&, T, T) const);

  nlohmann::json options_;
  std::string what_;
  std::set<std::string> used_;
};

}  // namespace difftx::api
