// A request in the engine (infer/engine.h): its tokens so far, its sampler and its streamed
// text. What it holds of the KV cache is the KvCacheManager's, under its id.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "infer/drafter.h"
#include "infer/engine.h"
#include "infer/stop_text.h"

namespace difftx::infer {

struct Sequence {
  Sequence(Engine::RequestId id_, Request r, int64_t vocab)
      : id(id_),
        request(std::move(r)),
        tokens(request.prompt),
        prompt_tokens(static_cast<int64_t>(tokens.size())),
        sampler(request.options.sampling, vocab),
        text(request.options.stop_strings, request.options.reasoning, request.options.include_stop_str),
        constraint(request.options.constraint ? request.options.constraint->start(request.options.stop_tokens)
                                              : nullptr) {
    sampler.note_prompt(request.prompt);
    if (request.options.prompt_logprobs) prompt_scores.resize(static_cast<size_t>(prompt_tokens - 1));
  }

  Engine::RequestId id;
  Request request;
  std::vector<int32_t> tokens;  // the prompt, then every generated token (a stop token that ended it too)
  int64_t prompt_tokens;
  int64_t cached_tokens = 0;  // prompt tokens found in the prefix cache on first admission
  bool admitted = false;
  bool scheduled = false;  // has rows in the step being scheduled
  Sampler sampler;
  StopText text;
  std::unique_ptr<TokenConstraint> constraint;  // none: any token
  // The draw's mask and the ids it leaves out besides the constraint's: the stop tokens before
  // min_tokens, the bad words' ends (SamplingStage::allowed).
  std::vector<uint64_t> draw_mask;
  std::vector<int32_t> banned;
  // Speculative decoding: the mode and most tokens per step (the engine's defaults resolved),
  // and the tokens drafted for the step being run (its rows after the last token's); the
  // sampling stage leaves there the accepted ones. A sampled (or biased) request with a draft
  // model has a sampler of its own for the drafts (its options, another seed): the draft model
  // draws from its distribution (Sampler::propose).
  DraftMode draft_mode = DraftMode::none;
  int64_t draft_tokens = 0;
  Draft draft;
  std::unique_ptr<Sampler> draft_sampler;

  // The prompt's scores (RequestOptions::prompt_logprobs): token p + 1's at p, filled as the
  // prompt's rows run, sent with the first event.
  std::vector<PromptTokenLogprob> prompt_scores;

  // Whether the prompt's rows give logits, for its scores: until a token is drawn (a sequence
  // preempted within its prompt scores it again).
  bool scores_prompt() const { return request.options.prompt_logprobs && generated() == 0; }
  std::span<const int32_t> prompt() const { return {tokens.data(), static_cast<size_t>(prompt_tokens)}; }
  std::span<const int32_t> generated_tokens() const { return std::span(tokens).subspan(prompt_tokens); }
  int64_t generated() const { return static_cast<int64_t>(tokens.size()) - prompt_tokens; }
};

}  // namespace difftx::infer
