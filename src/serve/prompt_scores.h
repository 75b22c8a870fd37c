// A scored prompt (infer::RequestOptions::prompt_logprobs) as a reply shows it: the prompt's
// tokens at the head of completions' logprobs (echo), and vLLM's prompt_logprobs list.
#pragma once
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/tokenizer.h"
#include "infer/engine.h"
#include "serve/openai_response.h"

namespace difftx::serve {

// The prompt's tokens for completions' logprobs: the first with no logprob (null, as OpenAI and
// vLLM write it), each other with its logprob and its alternatives, its own entry among them.
// `scores`: the engine's, tokens 1 to n - 1; `silent`: tokens that write no text.
std::vector<TokenInfo> prompt_token_infos(const data::Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                                          const std::vector<infer::PromptTokenLogprob>& scores,
                                          const std::vector<int32_t>& silent);

// vLLM's prompt_logprobs: null for the first token, then for each token an object keyed by token
// id, {"logprob", "rank", "decoded_token"}: the prompt's token, then its alternatives (ranks 1 on).
nlohmann::json prompt_logprobs_json(const data::Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                                    const std::vector<infer::PromptTokenLogprob>& scores);

}  // namespace difftx::serve
