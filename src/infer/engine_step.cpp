// One engine step (infer/engine.h): take new requests and cancellations in, schedule rows under
// the token budget (running sequences' next tokens first, then prompt chunks of sequences being
// prefilled, then newly admitted requests), run them through the model in one batch, then
// sample, stream and finish.
#include <algorithm>
#include <exception>

#include "data/tokenizer.h"
#include "infer/engine_state.h"
#include "infer/logprobs.h"

namespace difftx {
namespace {

// What a step runs for one sequence: positions [first, first + count).
struct Slice {
  Sequence* seq;
  int64_t first, count;
};

class Stepper {
 public:
  Stepper(Engine::State& st, const EngineOptions& o, const data::Tokenizer* tok, int64_t vocab_size)
      : st_(st), o_(o), tokenizer_(tok), P_(o.kv_block_tokens), V_(vocab_size) {}

  // Ends the sequence: its blocks go back to the pool, its last event goes out.
  void finish(Sequence& s, FinishReason reason, TokenEvent event = {}, const std::string& error = {}) {
    release_blocks(s);
    if (reason != FinishReason::error && reason != FinishReason::cancelled) event.text += s.text.finish();
    event.finish = reason;
    event.error = error;
    event.prompt_tokens = s.prompt_tokens;
    event.generated_tokens = s.generated();
    event.cached_tokens = s.cached_tokens;
    ++st_.counters.finished[static_cast<int>(reason)];
    if (s.request.on_event) s.request.on_event(event);
  }

  void release_blocks(Sequence& s) {
    for (int32_t b : s.blocks) st_.pool.release(b);
    s.blocks.clear();
    s.computed = 0;
    s.registered = 0;
    s.chain = 0;
  }

  // Blocks for positions [0, end); false when the pool has none left.
  bool grow(Sequence& s, int64_t end) {
    while (static_cast<int64_t>(s.blocks.size()) * P_ < end) {
      const int32_t b = st_.pool.allocate();
      if (b < 0) return false;
      s.blocks.push_back(b);
    }
    return true;
  }

  // The running sequence at `index` gives its blocks back and waits again, first in line; its
  // tokens are recomputed when it is admitted again (in the orders they were first computed in).
  void preempt(size_t index) {
    release_blocks(*st_.running[index]);
    ++st_.counters.preemptions;
    st_.waiting.push_front(std::move(st_.running[index]));
    st_.running.erase(st_.running.begin() + static_cast<std::ptrdiff_t>(index));
  }

  // Takes the full prompt blocks that the prefix cache holds (at least one prompt token is left
  // to compute, for the logits).
  void reuse_prefix(Sequence& s) {
    const int64_t full = (s.prompt_tokens - 1) / P_;
    while (s.registered < full) {
      const std::span<const int32_t> tokens(s.tokens.data() + s.registered * P_, P_);
      const uint64_t key = KvPool::chain_key(s.chain, tokens);
      const int32_t parent = s.blocks.empty() ? -1 : s.blocks.back();
      const int32_t b = st_.pool.lookup(key, parent, tokens);
      if (b < 0) break;
      s.blocks.push_back(b);
      s.chain = key;
      ++s.registered;
      s.computed += P_;
    }
  }

  // Registers the sequence's full blocks of prompt tokens whose keys and values are now stored.
  void register_prefix(Sequence& s) {
    const int64_t full = std::min(s.computed, s.prompt_tokens) / P_;
    while (s.registered < full) {
      const std::span<const int32_t> tokens(s.tokens.data() + s.registered * P_, P_);
      const uint64_t key = KvPool::chain_key(s.chain, tokens);
      const int32_t parent = s.registered == 0 ? -1 : s.blocks[s.registered - 1];
      st_.pool.register_block(s.blocks[s.registered], key, parent, tokens);
      s.chain = key;
      ++s.registered;
    }
  }

  // Preempts the newest running sequence after `index` that has no rows in this step; false
  // when there is none.
  bool preempt_newer_than(size_t index) {
    for (size_t j = st_.running.size(); j-- > index + 1;)
      if (!st_.running[j]->scheduled) {
        preempt(j);
        return true;
      }
    return false;
  }

  std::vector<Slice> schedule() {
    std::vector<Slice> slices;
    int64_t budget = o_.max_batch_tokens;
    for (auto& s : st_.running) s->scheduled = false;
    // Running sequences' next tokens. One that cannot grow preempts the newest sequence without
    // rows in this step, itself when there is none (the pool holds a whole context, so the
    // oldest always can).
    for (size_t i = 0; i < st_.running.size() && budget > 0;) {
      Sequence& s = *st_.running[i];
      if (s.pending() != 1) {
        ++i;
        continue;
      }
      while (!grow(s, s.computed + 1) && preempt_newer_than(i)) {
      }
      if (static_cast<int64_t>(s.blocks.size()) * P_ <= s.computed) {
        preempt(i);
        continue;
      }
      slices.push_back({&s, s.computed, 1});
      s.scheduled = true;
      --budget;
      ++i;
    }
    // Prompt chunks of sequences being prefilled, as far as the budget and the pool allow; one
    // that gets no block preempts newer ones without rows in this step (so the oldest always
    // moves on: two prompts that each hold half the pool cannot wait on each other).
    for (size_t i = 0; i < st_.running.size() && budget > 0; ++i) {
      Sequence& s = *st_.running[i];
      if (s.pending() <= 1) continue;
      int64_t n = chunk(s, budget);
      while (n == 0 && preempt_newer_than(i)) n = chunk(s, budget);
      if (n == 0) break;
      slices.push_back({&s, s.computed, n});
      s.scheduled = true;
      budget -= n;
    }
    // New requests, first come first, while there is room.
    while (budget > 0 && !st_.waiting.empty() && static_cast<int64_t>(st_.running.size()) < o_.max_running) {
      Sequence& s = *st_.waiting.front();
      if (o_.prefix_cache) reuse_prefix(s);
      const int64_t n = chunk(s, budget);
      if (n == 0) {
        release_blocks(s);
        break;
      }
      if (!s.admitted) {
        s.admitted = true;
        s.cached_tokens = s.computed;
        st_.counters.prefix_lookup_tokens += s.prompt_tokens;
        st_.counters.prefix_hit_tokens += s.computed;
      }
      slices.push_back({&s, s.computed, n});
      s.scheduled = true;
      budget -= n;
      st_.running.push_back(std::move(st_.waiting.front()));
      st_.waiting.pop_front();
    }
    return slices;
  }

  // How many of the sequence's pending tokens this step computes: within the budget and the
  // blocks the pool can give.
  int64_t chunk(Sequence& s, int64_t budget) {
    int64_t n = std::min(s.pending(), budget);
    grow(s, s.computed + n);
    return std::clamp<int64_t>(static_cast<int64_t>(s.blocks.size()) * P_ - s.computed, 0, n);
  }

  // The rows of the slices, rows of generated tokens (the GEMV order) first; returns how many.
  int64_t lay_out_rows(const std::vector<Slice>& slices, std::vector<BatchRow>& rows,
                       std::vector<std::span<const int32_t>>& tables) {
    rows.clear();
    tables.clear();
    for (const Slice& sl : slices) tables.emplace_back(sl.seq->blocks);
    for (int pass = 0; pass < 2; ++pass)
      for (size_t t = 0; t < slices.size(); ++t) {
        const Slice& sl = slices[t];
        for (int64_t p = sl.first; p < sl.first + sl.count; ++p) {
          const bool generated = p >= sl.seq->prompt_tokens;
          if (generated != (pass == 0)) continue;
          const bool last = p + 1 == static_cast<int64_t>(sl.seq->tokens.size());
          rows.push_back({sl.seq->tokens[p], p, static_cast<int32_t>(t), last});
        }
      }
    int64_t gemv_rows = 0;
    while (gemv_rows < static_cast<int64_t>(rows.size()) &&
           rows[gemv_rows].position >= slices[rows[gemv_rows].table].seq->prompt_tokens)
      ++gemv_rows;
    return gemv_rows;
  }

  // Draws the next token of a sequence from its logits and streams it. Returns whether it ends.
  bool advance(Sequence& s, const float* logits) {
    const RequestOptions& o = s.request.options;
    TokenEvent event;
    int32_t id;
    if (s.request.on_logits) s.request.on_logits({logits, static_cast<size_t>(V_)});
    try {
      if (s.constraint && s.constraint->done()) {  // an empty document: nothing to draw
        finish(s, FinishReason::stop);
        return true;
      }
      const int64_t n = s.generated();
      id = n < static_cast<int64_t>(o.forced.size())
               ? s.sampler.take(logits, o.forced[n])
               : s.sampler.sample(logits, s.constraint ? s.constraint->allowed() : nullptr);
      const bool stop = std::find(o.stop_tokens.begin(), o.stop_tokens.end(), id) != o.stop_tokens.end();
      if (stop) {
        finish(s, FinishReason::stop);
        return true;
      }
      if (s.constraint) s.constraint->accept(id);
    } catch (const std::exception& e) {
      finish(s, FinishReason::error, {}, e.what());
      return true;
    }
    event.id = id;
    if (o.logprobs || o.top_logprobs > 0) event.logprob = token_logprob(logits, st_.vocab, id, o.top_logprobs, event.top);
    if (tokenizer_ && id < tokenizer_->vocab_size()) event.text = s.text.push(tokenizer_->decode({&id, 1}));
    s.tokens.push_back(id);
    ++st_.counters.generated_tokens;
    if (s.text.stopped() || (s.constraint && s.constraint->done())) {
      finish(s, FinishReason::stop, std::move(event));
      return true;
    }
    if (s.generated() >= o.max_new_tokens || static_cast<int64_t>(s.tokens.size()) > st_.context) {
      finish(s, FinishReason::length, std::move(event));
      return true;
    }
    if (s.request.on_event) s.request.on_event(event);
    return false;
  }

 private:
  Engine::State& st_;
  const EngineOptions& o_;
  const data::Tokenizer* tokenizer_;
  int64_t P_;  // tokens per KV block
  int64_t V_;  // logits per row
};

}  // namespace

void Engine::fail_all(const std::string& why) {
  State& st = *state_;
  Stepper stepper(st, options_, tokenizer_, model_.config.vocab_size);
  for (auto& s : st.running) stepper.finish(*s, FinishReason::error, {}, why);
  for (auto& s : st.waiting) stepper.finish(*s, FinishReason::error, {}, why);
  st.running.clear();
  st.waiting.clear();
  std::lock_guard lock(mutex_);
  publish_stats();
}

bool Engine::publish_stats() {
  State& st = *state_;
  EngineStats& out = st.stats;
  out = st.counters;
  out.waiting = static_cast<int64_t>(st.waiting.size() + st.incoming.size());
  out.running = static_cast<int64_t>(st.running.size());
  out.kv_blocks_used = st.pool.used();
  out.kv_blocks_cached = st.pool.cached();
  return out.waiting > 0 || out.running > 0 || !st.cancels.empty();
}

bool Engine::step() {
  State& st = *state_;
  Stepper stepper(st, options_, tokenizer_, model_.config.vocab_size);
  std::vector<RequestId> cancels;
  {
    std::lock_guard lock(mutex_);
    for (auto& s : st.incoming) st.waiting.push_back(std::move(s));
    st.incoming.clear();
    cancels.swap(st.cancels);
  }
  // Cancellations, then requests that want no token at all.
  const auto drop = [&](auto& list, auto ends) {
    for (auto it = list.begin(); it != list.end();)
      if (ends(**it)) it = list.erase(it);
      else ++it;
  };
  const auto cancelled = [&](Sequence& s) {
    if (std::find(cancels.begin(), cancels.end(), s.id) == cancels.end()) return false;
    stepper.finish(s, FinishReason::cancelled);
    return true;
  };
  drop(st.running, cancelled);
  drop(st.waiting, cancelled);
  drop(st.waiting, [&](Sequence& s) {
    if (s.request.options.max_new_tokens > 0) return false;
    stepper.finish(s, FinishReason::length);
    return true;
  });

  const std::vector<Slice> slices = stepper.schedule();
  if (!slices.empty()) {
    std::vector<BatchRow> rows;
    std::vector<std::span<const int32_t>> tables;
    const int64_t gemv_rows = stepper.lay_out_rows(slices, rows, tables);
    const float* logits = st.forward.run(rows, gemv_rows, tables);
    ++st.counters.steps;
    for (const Slice& sl : slices) {
      Sequence& s = *sl.seq;
      const int64_t prompt_rows = std::clamp<int64_t>(s.prompt_tokens - sl.first, 0, sl.count);
      if (s.admitted && s.computed < s.prompt_tokens) st.counters.prompt_tokens += prompt_rows;
      s.computed += sl.count;
      if (options_.prefix_cache) stepper.register_prefix(s);
    }
    // Logits come in row order: each wanting row is its sequence's last token.
    std::vector<Sequence*> ended;
    int64_t j = 0;
    for (const BatchRow& r : rows)
      if (r.logits) {
        Sequence& s = *slices[r.table].seq;
        if (stepper.advance(s, logits + j++ * model_.config.vocab_size)) ended.push_back(&s);
      }
    drop(st.running, [&](Sequence& s) { return std::find(ended.begin(), ended.end(), &s) != ended.end(); });
  }

  std::lock_guard lock(mutex_);
  return publish_stats();
}

}  // namespace difftx
