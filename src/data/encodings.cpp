#include "data/encodings.h"

namespace difftx::data {
namespace {

// GPT-2's pattern, as tiktoken writes it today (possessive quantifiers; same matches as the
// original 's|'t|...|\s+(?!\S)|\s+).
const char* const kR50kPattern =
    R"('(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s)";

const char* const kCl100kPattern =
    R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s)";

const char* const kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n/]*)"
    R"(|\s*[\r\n]+)"
    R"(|\s+(?!\S))"
    R"(|\s+)";

const std::vector<EncodingSpec>& builtins() {
  static const std::vector<EncodingSpec> specs = {
      {"r50k_base", "r50k_base.tiktoken", kR50kPattern, {{kEndOfText, 50256}}},
      {"p50k_base", "p50k_base.tiktoken", kR50kPattern, {{kEndOfText, 50256}}},
      {"p50k_edit",
       "p50k_base.tiktoken",
       kR50kPattern,
       {{kEndOfText, 50256},
        {"<|fim_prefix|>", 50281},
        {"<|fim_middle|>", 50282},
        {"<|fim_suffix|>", 50283}}},
      {"cl100k_base",
       "cl100k_base.tiktoken",
       kCl100kPattern,
       {{kEndOfText, 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}}},
      {"o200k_base",
       "o200k_base.tiktoken",
       kO200kPattern,
       {{kEndOfText, 199999}, {"<|endofprompt|>", 200018}}},
  };
  return specs;
}

}  // namespace

std::optional<EncodingSpec> builtin_encoding(const std::string& name) {
  for (const auto& spec : builtins())
    if (spec.name == name) return spec;
  return std::nullopt;
}

std::vector<std::string> builtin_encoding_names() {
  std::vector<std::string> names;
  for (const auto& spec : builtins()) names.push_back(spec.name);
  return names;
}

const std::string& default_training_pattern() {
  static const std::string pattern = kCl100kPattern;
  return pattern;
}

}  // namespace difftx::data
