// Command-line options: `--key value`, `--key=value` and bare `--flag`. Every option a command
// reads is marked used; finish() rejects any the command did not know, naming it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/checked.h"

namespace difftx::cli {

// The values an integer option accepts (both ends included).
struct IntRange {
  int64_t min;
  int64_t max;
};
// The values a number option accepts; NaN and the infinities are never accepted.
struct NumberRange {
  double min;
  double max;
  bool min_excluded = false;  // (min, ...] instead of [min, ...]
  bool max_excluded = false;
};

// Ranges most options share (kMaxCount, kMaxDimension: core/checked.h).
inline constexpr int64_t kMaxBatchRows = int64_t{1} << 20;   // sequences per micro-batch
inline constexpr IntRange kPositive{1, kMaxCount};
inline constexpr IntRange kNonNegative{0, kMaxCount};
inline constexpr IntRange kAnyInteger{INT64_MIN, INT64_MAX};
inline constexpr IntRange kAnySeed = kAnyInteger;  // taken as its 64 bits
inline constexpr IntRange kSequenceLength{1, kMaxDimension};
inline constexpr IntRange kMicroBatch{1, kMaxBatchRows};
inline constexpr NumberRange kFraction{0, 1};
inline constexpr NumberRange kPositiveNumber{0, 1e300, true};

// The whole text as an integer within range ("+5" and "-5" read as numbers), or as a finite
// number within range (not NaN, inf, 1e999 or 1e-999); nullopt otherwise.
std::optional<int64_t> parse_integer(const std::string& text, IntRange range = kAnyInteger);
std::optional<double> parse_number(const std::string& text, NumberRange range);
// The items of "a,b,c" (an empty text is one empty item).
std::vector<std::string> comma_items(const std::string& text);

class Args {
 public:
  Args(std::string command, const std::vector<std::string>& argv);

  bool flag(const std::string& name);  // --name present (with no value)
  std::optional<std::string> get(const std::string& name);
  std::string get(const std::string& name, const std::string& fallback);
  std::string require(const std::string& name);
  // All values of an option that may repeat or take several values (--corpus a b c).
  std::vector<std::string> list(const std::string& name);
  // Numbers: every option declares the values it accepts; a value outside them, a non-number
  // or one beyond the type is an Error naming the option and the range.
  int64_t get_int(const std::string& name, int64_t fallback, IntRange range);
  double get_double(const std::string& name, double fallback, NumberRange range);
  // Comma-separated lists (--contexts 256,512); fallback is a list in the same form.
  std::vector<int64_t> get_int_list(const std::string& name, const std::string& fallback, IntRange range);
  std::vector<double> get_double_list(const std::string& name, const std::string& fallback, NumberRange range);
  std::vector<std::string> get_word_list(const std::string& name, const std::string& fallback);
  // Removes and returns the first bare argument (a sub-target such as `bench gemm`).
  std::optional<std::string> take_positional();
  // Throws if an option was given that the command never asked for.
  void finish() const;

 private:
  std::string command_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
  std::set<std::string> used_;
};

}  // namespace difftx::cli
