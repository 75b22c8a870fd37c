#include "infer/sampling_stage.h"

#include <algorithm>
#include <exception>

#include "infer/logprobs.h"

namespace difftx::infer {

SamplingStage::SamplingStage(const data::Tokenizer* tokenizer, int64_t vocab, int64_t logits_width, int64_t context,
                             EngineStats& counters)
    : tokenizer_(tokenizer), vocab_(vocab), logits_width_(logits_width), context_(context), counters_(counters) {}

int32_t SamplingStage::draw_token(Sequence& s, const float* logits, int32_t draft, const DraftDistribution* q) {
  const std::vector<int32_t>& forced = s.request.options.forced;
  const int64_t n = s.generated();
  return n < static_cast<int64_t>(forced.size()) ? s.sampler.take(logits, forced[n])
                                                 : s.sampler.sample(logits, allowed(s), draft, q);
}

const uint64_t* SamplingStage::allowed(Sequence& s) const {
  const uint64_t* mask = s.constraint ? s.constraint->allowed() : nullptr;
  const RequestOptions& o = s.request.options;
  const std::span<const int32_t> stops = s.generated() < o.min_tokens ? o.stop_tokens : std::span<const int32_t>{};
  return draw_allowed(mask, {stops, o.bad_words, s.generated_tokens()}, vocab_, s.banned, s.draw_mask);
}

void SamplingStage::score_prompt(Sequence& s, int64_t position, const float* logits) const {
  const auto id = s.tokens[static_cast<size_t>(position + 1)];
  PromptTokenLogprob& score = s.prompt_scores[static_cast<size_t>(position)];
  score.logprob = token_logprob(logits, vocab_, id, *s.request.options.prompt_logprobs, score.top);
  score.rank = token_rank(logits, vocab_, id);
}

FinishReason SamplingStage::advance(Sequence& s, const float* logits) {
  if (s.request.options.max_new_tokens == 0) {
    finish(s, FinishReason::length);
    return FinishReason::length;
  }
  const size_t drafted = s.draft.tokens.size();
  size_t accepted = 0, drawn = 0, drawn_as_drafted = 0;  // drawn: rows with a draft that drew a token
  FinishReason reason = FinishReason::none;
  for (size_t i = 0; i <= drafted; ++i) {
    const int32_t draft = i < drafted ? s.draft.tokens[i] : -1;
    int32_t id = -1;
    reason = take_one(s, logits + static_cast<int64_t>(i) * logits_width_, draft, s.draft.distribution(i), id);
    if (draft >= 0 && id >= 0) ++drawn, drawn_as_drafted += id == draft;
    if (reason != FinishReason::none || id != draft) break;
    ++accepted;  // its row's keys and values hold this token's
  }
  // The drafts after a rejected one are rejected with it; those after a token that ended the
  // request were never to be verified, and are not counted.
  counters_.draft_tokens += static_cast<int64_t>(reason == FinishReason::none ? drafted : drawn);
  counters_.draft_accepted += static_cast<int64_t>(drawn_as_drafted);
  s.draft.truncate(accepted);
  return reason;
}

FinishReason SamplingStage::take_one(Sequence& s, const float* logits, int32_t draft, const DraftDistribution* q,
                                     int32_t& id) {
  const RequestOptions& o = s.request.options;
  if (s.request.on_logits) s.request.on_logits({logits, static_cast<size_t>(logits_width_)});
  bool stop_token = false;
  try {
    if (s.constraint && s.constraint->done()) {  // an empty document: nothing to draw
      finish(s, FinishReason::stop);
      return FinishReason::stop;
    }
    id = draw_token(s, logits, draft, q);
    stop_token = std::find(o.stop_tokens.begin(), o.stop_tokens.end(), id) != o.stop_tokens.end();
    if (s.constraint && !stop_token) s.constraint->accept(id);  // the token a constraint allowed advances it
  } catch (const std::exception& e) {
    finish(s, FinishReason::error, {}, e.what());
    return FinishReason::error;
  }
  s.tokens.push_back(id);
  ++counters_.generated_tokens;
  if (stop_token) {  // generated, and counted as OpenAI and vLLM count it (usage), but neither streamed nor text
    TokenEvent event;
    event.stop_token = id;
    finish(s, FinishReason::stop, std::move(event));
    return FinishReason::stop;
  }
  TokenEvent event;
  event.id = id;
  if (o.logprobs || o.top_logprobs > 0) event.logprob = token_logprob(logits, vocab_, id, o.top_logprobs, event.top);
  // vLLM's min_tokens: stop strings are looked for once that many tokens are out.
  if (std::string bytes; token_bytes(tokenizer_, o.silent_tokens, id, bytes))
    event.text = s.text.push(bytes, s.generated() >= o.min_tokens);
  FinishReason reason = FinishReason::none;
  if (s.text.stopped() || (s.constraint && s.constraint->done())) reason = FinishReason::stop;
  else if (s.generated() >= o.max_new_tokens || static_cast<int64_t>(s.tokens.size()) > context_)
    reason = FinishReason::length;
  if (reason != FinishReason::none) {
    finish(s, reason, std::move(event));
  } else if (s.request.on_event) {
    event.prompt_logprobs = std::move(s.prompt_scores);  // the first event takes them
    s.prompt_scores.clear();
    if (s.generated() == 1) {  // and says how much of the prompt the prefix cache held
      event.prompt_tokens = s.prompt_tokens;
      event.cached_tokens = s.cached_tokens;
    }
    s.request.on_event(event);
  }
  return reason;
}

void SamplingStage::finish(Sequence& s, FinishReason reason, TokenEvent event, const std::string& error) {
  if (reason != FinishReason::error && reason != FinishReason::cancelled) {
    event.text += s.text.finish();
    event.prompt_logprobs = std::move(s.prompt_scores);  // where no event came before
    s.prompt_scores.clear();
  }
  event.finish = reason;
  if (const std::string* stop = s.text.stopped_by()) event.stop_string = *stop;
  event.error = error;
  event.prompt_tokens = s.prompt_tokens;
  event.generated_tokens = s.generated();
  event.cached_tokens = s.cached_tokens;
  ++counters_.finished[static_cast<int>(reason)];
  if (s.request.on_event) s.request.on_event(event);
}

}  // namespace difftx::infer
