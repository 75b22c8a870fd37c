// vLLM's bad_words (RequestOptions::bad_words): token sequences a request never writes whole. The
// last token of one is left out of a draw where the generated tokens (not the prompt's, as vLLM
// has it) end with the others; a one-token word is never drawn.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace difftx::infer {

// Appends to `out` the last token of each of `words` that the next token would complete after
// `generated` (the request's generated tokens so far, at least its last longest-word-less-one).
void bad_word_ends(std::span<const std::vector<int32_t>> words, std::span<const int32_t> generated,
                   std::vector<int32_t>& out);

}  // namespace difftx::infer
