#include "infer/scheduler.h"

#include <algorithm>

namespace difftx::infer {

Scheduler::Scheduler(KvCacheManager& kv, int64_t max_batch_tokens, int64_t max_running, int64_t max_scored_rows,
                     EngineStats& counters)
    : kv_(kv),
      max_batch_tokens_(max_batch_tokens),
      max_running_(max_running),
      max_scored_rows_(max_scored_rows),
      counters_(counters) {}

void Scheduler::preempt(size_t index) {
  kv_.free(running_[index]->id);
  running_[index]->draft.clear();
  ++counters_.preemptions;
  waiting_.push_front(std::move(running_[index]));
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
}

// The newest running sequence after `index` without rows in this step is preempted; false when
// there is none.
bool Scheduler::preempt_newer_than(size_t index) {
  for (size_t j = running_.size(); j-- > index + 1;)
    if (!running_[j]->scheduled) {
      preempt(j);
      return true;
    }
  return false;
}

// How many of the sequence's pending tokens this step computes, within the budget (and a scored
// prompt's rows left) and the slots the cache can give; those slots are taken.
int64_t Scheduler::chunk(Sequence& s, int64_t budget) {
  const bool scored = s.scores_prompt();
  const int64_t n = kv_.fit(s.id, std::min({pending(s), budget, scored ? scored_rows_left_ : budget}));
  if (n > 0) kv_.allocate_slots(s.id, n);
  if (scored) scored_rows_left_ -= n;
  return n;
}

const StepPlan& Scheduler::schedule() {
  std::vector<Slice>& slices = plan_.slices;
  slices.clear();
  int64_t budget = max_batch_tokens_;
  scored_rows_left_ = max_scored_rows_;
  for (auto& s : running_) s->scheduled = false;
  // Running sequences' next tokens, every one its slot first.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Sequence& s = *running_[i];
    if (pending(s) != 1) {
      ++i;
      continue;
    }
    bool slotted = false;
    while (!(slotted = kv_.allocate_slots(s.id, 1)) && preempt_newer_than(i)) {
    }
    if (!slotted) {
      preempt(i);
      continue;
    }
    slices.push_back({&s, kv_.computed(s.id), 1});
    s.scheduled = true;
    budget -= 1;
    ++i;
  }
  // Then their drafted tokens, from the budget and the slots left: a draft never takes a slot
  // another sequence's next token needs.
  for (Slice& sl : slices) {
    Draft& draft = sl.seq->draft;
    draft.truncate(static_cast<size_t>(std::max<int64_t>(budget, 0)));
    const auto lookahead = static_cast<int64_t>(draft.tokens.size());
    if (lookahead == 0) continue;
    if (!kv_.allocate_slots(sl.seq->id, 1, lookahead)) {
      draft.clear();
      continue;
    }
    sl.count += lookahead;
    sl.lookahead = lookahead;
    budget -= lookahead;
  }
  // Prompt chunks of sequences being prefilled, as far as the budget and the cache allow.
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Sequence& s = *running_[i];
    if (pending(s) <= 1 || (s.scores_prompt() && scored_rows_left_ == 0)) continue;
    int64_t n = chunk(s, budget);
    while (n == 0 && preempt_newer_than(i)) n = chunk(s, budget);
    if (n == 0) break;
    slices.push_back({&s, kv_.computed(s.id), n});
    s.scheduled = true;
    budget -= n;
  }
  // New requests, first come first, while there is room.
  while (budget > 0 && !waiting_.empty() && static_cast<int64_t>(running_.size()) < max_running_) {
    Sequence& s = *waiting_.front();
    if (s.scores_prompt() && scored_rows_left_ == 0) break;
    const int64_t cached = s.scores_prompt() ? 0 : kv_.reuse_prefix(s.id, s.prompt());
    const int64_t n = chunk(s, budget);
    if (n == 0) {
      kv_.free(s.id);
      break;
    }
    if (!s.admitted) {
      s.admitted = true;
      s.cached_tokens = cached;
      if (!s.scores_prompt()) counters_.prefix_lookup_tokens += s.prompt_tokens;
      counters_.prefix_hit_tokens += cached;
    }
    slices.push_back({&s, cached, n});
    s.scheduled = true;
    budget -= n;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  lay_out_rows();
  return plan_;
}

// The rows of the slices, rows of generated tokens (the GEMV order) first, and every group's
// tables.
void Scheduler::lay_out_rows() {
  const std::vector<Slice>& slices = plan_.slices;
  std::vector<BatchRow>& rows = plan_.rows;
  rows.clear();
  plan_.tables.resize(kv_.groups().size());
  for (size_t g = 0; g < plan_.tables.size(); ++g) {
    plan_.tables[g].clear();
    for (const Slice& sl : slices) plan_.tables[g].push_back(kv_.table(sl.seq->id, static_cast<int32_t>(g)));
  }
  for (int pass = 0; pass < 2; ++pass)
    for (size_t t = 0; t < slices.size(); ++t) {
      const Slice& sl = slices[t];
      const std::vector<int32_t>& tokens = sl.seq->tokens;
      const auto n = static_cast<int64_t>(tokens.size());
      for (int64_t p = sl.first; p < sl.first + sl.count; ++p) {
        const bool generated = p >= sl.seq->prompt_tokens;
        if (generated != (pass == 0)) continue;
        // The last token's row and its drafted tokens' rows give logits, and a scored prompt's rows.
        rows.push_back({p < n ? tokens[p] : sl.seq->draft.tokens[p - n], p, static_cast<int32_t>(t),
                        p + 1 >= n || sl.seq->scores_prompt()});
      }
    }
  int64_t gemv_rows = 0;
  while (gemv_rows < static_cast<int64_t>(rows.size()) &&
         rows[gemv_rows].position >= slices[rows[gemv_rows].table].seq->prompt_tokens)
    ++gemv_rows;
  plan_.gemv_rows = gemv_rows;
}

void Scheduler::commit() {
  for (const Slice& sl : plan_.slices) {
    Sequence& s = *sl.seq;
    const int64_t prompt_rows = std::clamp<int64_t>(s.prompt_tokens - sl.first, 0, sl.count);
    if (s.admitted && kv_.computed(s.id) < s.prompt_tokens) counters_.prompt_tokens += prompt_rows;
    kv_.commit(s.id, s.prompt(), sl.count - sl.lookahead + static_cast<int64_t>(s.draft.tokens.size()));
    s.draft.clear();
  }
}

}  // namespace difftx::infer
