// Tokenizers on disk. A tokenizer is a .tiktoken rank file (one "base64-bytes rank" line per
// mergeable token, tiktoken's format) plus what that format leaves out, the split pattern and
// the special tokens: built in for the known encodings (encodings.h), otherwise in a JSON
// sidecar named like the rank file with ".json" appended (tokenizer.tiktoken.json). Trained
// vocabularies use the same pair of files, so one loader and one encoder serve both.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "data/token_table.h"
#include "data/tokenizer.h"

namespace difftx::data {

// name_or_path is, in this order:
//  - an existing directory: DIR/tokenizer.tiktoken with its sidecar, else DIR/tokenizer.json
//    (a Hugging Face model directory: hf_tokenizer.h), else DIR/vocab.json and DIR/merges.txt
//    (a slow tokenizer's files, converted as transformers converts them);
//  - an existing file: a .json file is a Hugging Face tokenizer.json; another FILE comes with
//    FILE.json, or without a sidecar when FILE's stem is a built-in encoding name
//    (cl100k_base.tiktoken);
//  - a name, looked up in tokenizer_dir() (data_paths.h: $DIFFTX_DATA/tokenizers, else
//    <repo>/data/tokenizers): a built-in's rank file, NAME/ (a saved tokenizer), or
//    NAME.tiktoken with a sidecar. A missing file is an error that says to run scripts/setup.
Tokenizer load_tokenizer(const std::string& name_or_path);

// Whether load_tokenizer(DIR) finds a tokenizer's files in DIR (not a name or a built-in).
bool has_tokenizer_files(const std::filesystem::path& dir);
// Those files, for messages.
inline constexpr const char* kTokenizerFilesNamed =
    "tokenizer.tiktoken with tokenizer.tiktoken.json, tokenizer.json, or vocab.json with merges.txt";

// Writes DIR/tokenizer.tiktoken and DIR/tokenizer.tiktoken.json (creating DIR), or for a
// tokenizer that those cannot hold (one read from tokenizer.json) DIR/tokenizer.json and
// DIR/tokenizer_config.json, so that load_tokenizer(DIR) gives back an identical tokenizer.
void save_tokenizer(const Tokenizer& tokenizer, const std::filesystem::path& dir);
// The names of the files save_tokenizer writes for this tokenizer.
std::vector<std::string> saved_tokenizer_files(const Tokenizer& tokenizer);

// The rank file alone. Errors name the file and line: bad base64, a bad rank, a duplicate
// rank or a duplicate token.
TokenTable read_tiktoken_file(const std::filesystem::path& path);
std::string tiktoken_file_text(const TokenTable& ranks);  // lines in rank order

inline constexpr const char* kTokenizerRanksFile = "tokenizer.tiktoken";
inline constexpr const char* kTokenizerSidecarFile = "tokenizer.tiktoken.json";

}  // namespace difftx::data
