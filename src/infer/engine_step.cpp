// One engine step (infer/engine.h): take new requests and cancellations in, let the scheduler
// pick the rows (scheduler.h), run them through the forward in one batch, commit them to the KV
// cache, then draw, stream and finish in the sampling stage (sampling_stage.h).
#include <algorithm>

#include "infer/engine_state.h"

namespace difftx::infer {
namespace {

// Ends the sequence: its slots go back to the cache, its last event goes out.
void finish(Engine::State& st, Sequence& s, FinishReason reason, const std::string& error = {}) {
  st.release(s);
  st.sampling.finish(s, reason, {}, error);
}

// Removes the sequences for which `ends` (which finishes them) is true.
template <typename List, typename Ends>
void drop(List& list, Ends ends) {
  for (auto it = list.begin(); it != list.end();)
    if (ends(**it)) it = list.erase(it);
    else ++it;
}

// The tokens drafted for a running sequence's next step (speculative decoding): only for one
// that decodes (its last token generated, so that every row of the step is a generated token's),
// at most as many as can still be drawn before max_new_tokens and the context, each one the
// request could take (its constraint, stop tokens, stop strings, min_tokens and bad words:
// DraftGuard). A draft sampler starts from the penalties' counts of the tokens drawn so far.
void draft(Engine::State& st, Sequence& s) {
  s.draft.clear();
  Drafter* drafter = st.drafter(s.draft_mode);
  if (!drafter || st.scheduler.pending(s) != 1 || s.generated() < 1) return;
  const RequestOptions& o = s.request.options;
  const auto n = static_cast<int64_t>(s.tokens.size());
  const int64_t max = std::min({s.draft_tokens, o.max_new_tokens - s.generated() - 1, st.context - n});
  if (max < 1) return;
  try {
    DraftGuard guard(s.constraint.get(), o.stop_tokens, st.vocab, {&s.text, st.sampling.tokenizer(), o.silent_tokens},
                     o.min_tokens - s.generated(), {o.bad_words, s.generated_tokens()});
    if (guard.ended()) return;
    if (s.draft_sampler) s.draft_sampler->count_as(s.sampler);
    drafter->propose(s.id, s.tokens, max, s.draft_sampler.get(), guard, s.draft);
  } catch (const std::exception&) {
    // A draft is a guess: one that fails (its constraint's, say) is no draft. The request meets
    // the error itself, if it is one, where its own token is drawn, and ends alone.
    s.draft.clear();
  }
}

// A sequence whose prompt this step completed: its drafter reads the prompt before the first
// token is drawn, so that the prompt's processing holds all of it.
void prefill_draft(Engine::State& st, const Slice& slice) {
  const Sequence& s = *slice.seq;
  Drafter* drafter = st.drafter(s.draft_mode);
  if (drafter && s.generated() == 0 && s.request.options.max_new_tokens > 1 &&
      slice.first + slice.count == static_cast<int64_t>(s.tokens.size()))
    drafter->prefill(s.id, s.tokens);
}

}  // namespace

void Engine::fail_all(const std::string& why) {
  State& st = *state_;
  for (auto& s : st.scheduler.running()) finish(st, *s, FinishReason::error, why);
  for (auto& s : st.scheduler.waiting()) finish(st, *s, FinishReason::error, why);
  st.scheduler.running().clear();
  st.scheduler.waiting().clear();
  std::lock_guard lock(mutex_);
  publish_stats();
}

bool Engine::publish_stats() {
  State& st = *state_;
  EngineStats& out = st.stats;
  out = st.counters;
  out.waiting = static_cast<int64_t>(st.scheduler.waiting().size() + st.incoming.size());
  out.running = static_cast<int64_t>(st.scheduler.running().size());
  out.kv_blocks_used = st.kv.used_blocks();
  out.kv_blocks_cached = st.kv.cached_blocks();
  return out.waiting > 0 || out.running > 0 || !st.cancels.empty();
}

bool Engine::step() {
  State& st = *state_;
  auto& running = st.scheduler.running();
  auto& waiting = st.scheduler.waiting();
  std::vector<RequestId> cancels;
  {
    std::lock_guard lock(mutex_);
    for (auto& s : st.incoming) waiting.push_back(std::move(s));
    st.incoming.clear();
    cancels.swap(st.cancels);
  }
  // Cancellations, then requests that want no token at all (nor their prompt's scores).
  const auto cancelled = [&](Sequence& s) {
    if (std::find(cancels.begin(), cancels.end(), s.id) == cancels.end()) return false;
    finish(st, s, FinishReason::cancelled);
    return true;
  };
  drop(running, cancelled);
  drop(waiting, cancelled);
  drop(waiting, [&](Sequence& s) {
    if (s.request.options.max_new_tokens > 0 || s.request.options.prompt_logprobs) return false;
    finish(st, s, FinishReason::length);
    return true;
  });

  for (auto& s : running) draft(st, *s);
  const StepPlan& plan = st.scheduler.schedule();
  if (!plan.empty()) {
    const float* logits = st.forward(plan);
    ++st.counters.steps;
    for (const Slice& slice : plan.slices) prefill_draft(st, slice);
    // Logits come in row order: a scored prompt's rows; a sequence's last token's row, then its
    // drafted tokens' rows.
    std::vector<Sequence*> ended;
    const int64_t V = model_.config.vocab_size;
    int64_t j = 0;
    for (size_t i = 0; i < plan.rows.size(); ++i) {
      const BatchRow& row = plan.rows[i];
      if (!row.logits) continue;
      const Slice& slice = plan.slices[row.table];
      if (row.position + 1 < slice.seq->prompt_tokens) {
        st.sampling.score_prompt(*slice.seq, row.position, logits + j++ * V);
        continue;
      }
      if (st.sampling.advance(*slice.seq, logits + j * V) != FinishReason::none) ended.push_back(slice.seq);
      i += slice.lookahead;
      j += 1 + slice.lookahead;
    }
    st.scheduler.commit();  // the accepted drafted tokens' positions are kept
    for (Sequence* s : ended) st.release(*s);
    drop(running, [&](Sequence& s) { return std::find(ended.begin(), ended.end(), &s) != ended.end(); });
  }

  std::lock_guard lock(mutex_);
  return publish_stats();
}

}  // namespace difftx::infer
