// The engine's scheduler: which rows each step runs. Under the token budget (max_batch_tokens
// rows) it takes the running sequences' next tokens first, then chunks of the prompts being
// prefilled, then new requests, first come first, while max_running and the KV cache allow. It
// touches the cache only through the KvCacheManager: slots for the rows it picks, their commit
// after the forward, and preemption (a running sequence gives its slots back and waits again,
// first in line, to be recomputed when it is admitted again).
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "infer/batch_forward.h"
#include "infer/engine.h"
#include "infer/kv_cache_manager.h"
#include "infer/sequence.h"

namespace difftx::infer {

// What a step runs for one sequence: positions [first, first + count), the last `lookahead` of
// them the sequence's drafted tokens (Sequence::draft).
struct Slice {
  Sequence* seq;
  int64_t first, count;
  int64_t lookahead = 0;
};

// One step's rows, in the order the forward runs them.
struct StepPlan {
  std::vector<Slice> slices;   // BatchRow::table is an index into these
  std::vector<BatchRow> rows;  // rows of generated tokens (the GEMV order) first
  int64_t gemv_rows = 0;
  // tables[group][slice]: the slice's sequence's table in each group (KvCacheManager::table).
  std::vector<std::vector<std::span<const int32_t>>> tables;
  bool empty() const { return slices.empty(); }
};

class Scheduler {
 public:
  // kv outlives the scheduler; the counters it keeps: preemptions, prompt tokens computed and
  // the prefix cache's lookups and hits.
  // max_scored_rows: the most rows of scored prompts (RequestOptions::prompt_logprobs), whose
  // logits are all kept, in one step.
  Scheduler(KvCacheManager& kv, int64_t max_batch_tokens, int64_t max_running, int64_t max_scored_rows,
            EngineStats& counters);

  // First come first; a preempted sequence goes first.
  std::deque<std::unique_ptr<Sequence>>& waiting() { return waiting_; }
  // In admission order.
  std::vector<std::unique_ptr<Sequence>>& running() { return running_; }

  // Picks this step's rows (none: the plan is empty). A running sequence's drafted tokens
  // (Sequence::draft) become rows after its next token's, as far as the budget and the KV slots
  // left once every running sequence has its next token's allow (a draft never preempts, nor takes
  // a slot another's next token needs; what does not fit is dropped). A running sequence that cannot get a slot
  // for its next token preempts the newest sequence without rows in this step, else itself (a
  // pool that holds a whole context lets the oldest always go on); a prompt that gets no slot
  // preempts newer ones likewise, so two prompts that each hold half the pool cannot wait on
  // each other. A scored prompt is computed in full (no cached prefix), in chunks of at most the
  // scored rows left in the step.
  const StepPlan& schedule();
  // After the forward ran the plan and the sampling stage took the tokens: its positions are
  // computed, of a slice's drafted ones those the sampling stage left in Sequence::draft (the
  // accepted ones); the rest are rolled back.
  void commit();

  // The sequence's tokens whose keys and values are not stored yet.
  int64_t pending(const Sequence& s) const { return static_cast<int64_t>(s.tokens.size()) - kv_.computed(s.id); }

 private:
  void preempt(size_t index);
  bool preempt_newer_than(size_t index);
  int64_t chunk(Sequence& s, int64_t budget);
  void lay_out_rows();

  KvCacheManager& kv_;
  int64_t max_batch_tokens_, max_running_, max_scored_rows_;
  int64_t scored_rows_left_ = 0;  // in the step being scheduled
  EngineStats& counters_;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;
  StepPlan plan_;
};

}  // namespace difftx::infer
