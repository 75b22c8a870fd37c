// The encodings difftx knows by name, with the split patterns and special tokens that
// tiktoken (tiktoken_ext/openai_public.py) defines for them. Their ranks come from .tiktoken
// files fetched by scripts/setup. One known divergence from tiktoken's Rust regex: PCRE2's \s
// (with UCP) also matches U+180E MONGOLIAN VOWEL SEPARATOR, which Unicode no longer counts as
// white space, so text containing it may split differently.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace difftx::data {

inline constexpr const char* kEndOfText = "<|endoftext|>";

struct EncodingSpec {
  std::string name;
  std::string ranks_file;  // file name under the tokenizers directory
  std::string pattern;
  std::map<std::string, int32_t> special_tokens;
};

// nullopt when the name is not a built-in encoding.
std::optional<EncodingSpec> builtin_encoding(const std::string& name);
std::vector<std::string> builtin_encoding_names();

// The split pattern trained vocabularies use: cl100k_base's (contractions, letters with one
// leading non-letter, digits in groups of up to three, punctuation runs, whitespace).
const std::string& default_training_pattern();

}  // namespace difftx::data
