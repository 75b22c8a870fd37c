// Hugging Face tokenizers' files (tokenizer.json, with tokenizer_config.json beside it, or a slow
// tokenizer's vocab.json and merges.txt) of the byte-level BPE family: Llama 3, Qwen 2/3, GPT-2
// style. docs/FORMATS.md lists what is read; anything else (Unigram, WordPiece, byte_fallback,
// Metaspace, ...) is refused with an error naming the key and what is supported.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/tokenizer.h"

namespace difftx::data {

inline constexpr const char* kHfTokenizerFile = "tokenizer.json";
inline constexpr const char* kHfTokenizerConfigFile = "tokenizer_config.json";

// Reads a tokenizer.json file; tokenizer_config.json in the same directory, when present,
// gives the end-of-text token (eos_token) and whether BOS / EOS are added (add_bos_token,
// add_eos_token). Ids and sizes are range-checked; errors name the file and the key.
Tokenizer read_hf_tokenizer(const std::filesystem::path& tokenizer_json);

// A tokenizer.json already parsed, with its tokenizer_config.json's object (empty for none);
// `where` and `config_where` name them in errors.
Tokenizer hf_tokenizer_from_json(const nlohmann::json& tokenizer_json, const std::string& where,
                                 const nlohmann::json& config, const std::string& config_where);

inline constexpr const char* kHfVocabFile = "vocab.json";
inline constexpr const char* kHfMergesFile = "merges.txt";

// A directory with a slow tokenizer's files and no tokenizer.json: vocab.json and merges.txt, with
// tokenizer_config.json, added_tokens.json and special_tokens_map.json where present. Converted as
// transformers' AutoTokenizer converts them (convert_slow_tokenizer.py), by tokenizer_class
// (else config.json's model_type): GPT2Tokenizer and CodeGenTokenizer as GPT2Converter does
// (GPT-2's split pattern; BOS first only with add_bos_token), Qwen2Tokenizer as Qwen2Converter
// does (NFC, Qwen's split pattern); another class is an error naming it.
Tokenizer read_hf_slow_tokenizer(const std::filesystem::path& dir);

// Writes DIR/tokenizer.json and DIR/tokenizer_config.json (creating DIR) so that transformers'
// AutoTokenizer (and read_hf_tokenizer) load a tokenizer that encodes as this one does. A
// tiktoken-family tokenizer gets a merge list made from its ranks: every split of a token into
// two tokens, ordered by the token's rank.
void write_hf_tokenizer(const Tokenizer& tokenizer, const std::filesystem::path& dir);

// The merge list in rank order, as pairs of token ids: the tokenizer's own, or for tiktoken's rule
// every split of a token into two tokens, ordered by the token's rank (then by split point), so
// that the listed merges happen in the order tiktoken's rule would make them. tokenizer.json's
// "merges" and GGUF's tokenizer.ggml.merges are this list.
std::vector<std::pair<int32_t, int32_t>> bpe_merge_pairs(const Tokenizer& tokenizer);

// A special token as tokenizer_config.json writes it (bos_token, eos_token, an entry of
// additional_special_tokens): a string, or an AddedToken object {"content": STRING, ...}. The
// text, or nullopt for any other value (null included). Both the tokenizer and the chat template
// read the file's special tokens through it.
std::optional<std::string> special_token_text(const nlohmann::json& value);

// GPT-2's split pattern, which a ByteLevel pre-tokenizer with use_regex applies.
const std::string& gpt2_pattern();

}  // namespace difftx::data
