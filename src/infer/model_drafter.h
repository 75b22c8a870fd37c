// A draft model as a drafter: a smaller model with the target's vocabulary proposes its
// continuation of each sequence (Sampler::propose): its greedy one, or for a sampled or biased
// request one drawn from its own distribution under the request's options, which the
// verification uses. It keeps its own paged KV cache per sequence (the sequence's tokens so far;
// drafted tokens' rows are rolled back after each proposal, as they are only guesses), reads the
// prompt with the target's prefill, catches up on the tokens the target accepted in one batch,
// then decodes one row per drafted token, each drawn among the ids the request's guard allows
// there (its constraint, advanced through the drafted tokens) and the last one where the guard
// says the request would end. The drafted rows stay until the next proposal for the
// sequence, which keeps those of the tokens the target accepted and rolls the rest back: the
// catch-up is then one row.
// A proposal's length follows how often the target takes the sequence's drafts (DraftLength),
// counting only the tokens the request's constraint leaves a choice at: one it forces is taken.
// Where its cache cannot hold a sequence and its draft it runs nothing and proposes nothing (the
// target decodes on), keeping the rows it has for a later step.
#pragma once
#include <memory>
#include <unordered_map>
#include <vector>

#include "infer/batch_forward.h"
#include "infer/draft_length.h"
#include "infer/drafter.h"
#include "infer/kv_cache_manager.h"
#include "infer/kv_pool.h"

namespace difftx::infer {

class ModelDrafter : public Drafter {
 public:
  // `model` (which outlives the drafter) drafts ids in [0, vocab); its cache holds `kv_tokens`
  // positions of every sequence together, each position below `context`; a step runs at most
  // `max_rows` rows. A hybrid model is an error (its recurrent state is not rolled back here).
  // Errors name the options as `spelling` writes them.
  ModelDrafter(const model::Model& model, int64_t vocab, kernels::KvStorage kv, int64_t kv_tokens, int64_t context,
               int64_t max_rows, OptionSpelling spelling);

  void propose(uint64_t seq, std::span<const int32_t> tokens, int64_t max, Sampler* sampler, DraftGuard& guard,
               Draft& out) override;
  void prefill(uint64_t seq, std::span<const int32_t> prompt) override;
  void release(uint64_t seq) override;

 private:
  // A proposal's rows not yet committed (its step stays open): the catch-up rows, then from
  // position n - 1 the last of the n tokens it was given and the drafted tokens but the last.
  struct Pending {
    int64_t n = 0;
    std::vector<int32_t> drafted;
    std::vector<bool> forced;  // per drafted token: the only one its constraint allowed
  };
  // Commits the pending rows of `seq` that the sequence's `tokens` still stand behind, leaving
  // the last token's row to compute (for its logits); rolls back the others. The target's
  // verdict on the drafted tokens goes to the sequence's DraftLength.
  void settle(uint64_t seq, std::span<const int32_t> tokens);
  // The sequence's rows and pending proposal go (its DraftLength stays: the same sequence).
  void drop_rows(uint64_t seq);
  // Whether the cache can hold the sequence's first `positions` positions, now.
  bool room_for(uint64_t seq, int64_t positions) const;
  // Runs and commits the rows of `tokens` from the sequence's computed count on, in steps of at
  // most max_rows rows (room_for them checked).
  void catch_up(uint64_t seq, std::span<const int32_t> tokens);
  // Runs the rows of `seq`; the last row's logits (null where no row asks for them).
  const float* run(uint64_t seq, std::span<const BatchRow> rows);

  int64_t context_, max_rows_;
  Sampler greedy_;  // proposes for requests without a sampler of their own
  KvPool pool_;
  KvCacheManager kv_;
  BatchForward forward_;
  std::vector<BatchRow> rows_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::unordered_map<uint64_t, DraftLength> lengths_;
};

}  // namespace difftx::infer
