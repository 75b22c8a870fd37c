// Where difftx finds its data: $DIFFTX_DATA when set, else <repo>/data (what scripts/setup
// fills: tokenizers/, gpt-tokenizer/, sotu/, moby-dick/; scripts/fetch-data honours the same
// variable).
#pragma once
#include <filesystem>

namespace difftx::data {

std::filesystem::path data_root();
// data_root()/tokenizers: where tokenizers are looked up by name.
std::filesystem::path tokenizer_dir();

}  // namespace difftx::data
