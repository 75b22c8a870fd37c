// vLLM's bad_words as the engine takes them (infer::RequestOptions::bad_words): each word's token
// sequences, as vLLM makes them, so that it is kept out at the start of a word and within a text.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace difftx::serve {

// Each word encoded without special tokens, its leading whitespace dropped; then again after one
// space, kept where that gives as many tokens starting with another one (a tokenizer that marks
// a word's start). A word of no tokens, or of more than the engine takes, is an Error naming it.
std::vector<std::vector<int32_t>> bad_word_sequences(const data::Tokenizer& tokenizer,
                                                     const std::vector<std::string>& words);

}  // namespace difftx::serve
