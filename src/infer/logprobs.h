// Log-probabilities of the next token under the model's distribution, softmax over the raw
// logits of ids [0, vocab): what an engine event reports as logprob and top alternatives.
#pragma once
#include <cstdint>
#include <vector>

#include "infer/engine.h"

namespace difftx::infer {

// log p(id), and the `top` most likely tokens (most likely first; equal logits by ascending id).
float token_logprob(const float* logits, int64_t vocab, int32_t id, int top, std::vector<TokenLogprob>& alternatives);
// The rank of id among the ids: 1 + how many have a higher logit (vLLM's rank).
int64_t token_rank(const float* logits, int64_t vocab, int32_t id);

}  // namespace difftx::infer
