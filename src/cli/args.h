// Command-line options: `--key value`, `--key=value` and bare `--flag`. Every option a command
// reads is marked used; finish() rejects any the command did not know, naming it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace difftx::cli {

// The whole of `text` as an integer (a number); nullopt when it is not one: empty, trailing
// characters, out of range.
std::optional<int64_t> parse_integer(const std::string& text);
std::optional<double> parse_number(const std::string& text);

class Args {
 public:
  Args(std::string command, const std::vector<std::string>& argv);

  bool flag(const std::string& name);  // --name present (with no value)
  std::optional<std::string> get(const std::string& name);
  std::string get(const std::string& name, const std::string& fallback);
  std::string require(const std::string& name);
  // All values of an option that may repeat or take several values (--corpus a b c).
  std::vector<std::string> list(const std::string& name);
  int64_t get_int(const std::string& name, int64_t fallback);
  double get_double(const std::string& name, double fallback);
  // Comma-separated lists (--contexts 256,512); fallback is a list in the same form.
  std::vector<int64_t> get_int_list(const std::string& name, const std::string& fallback);
  std::vector<double> get_double_list(const std::string& name, const std::string& fallback);
  std::vector<std::string> get_word_list(const std::string& name, const std::string& fallback);
  // Removes and returns the first bare argument (a sub-target such as `bench gemm`).
  std::optional<std::string> take_positional();
  // Throws if an option was given that the command never asked for.
  void finish() const;

 private:
  // get(name) parsed, fallback when absent; an error naming the option and `kind` when it is not one.
  template <typename T>
  T get_parsed(const std::string& name, T fallback, std::optional<T> (*parse)(const std::string&), const char* kind);

  std::string command_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
  std::set<std::string> used_;
};

}  // namespace difftx::cli
