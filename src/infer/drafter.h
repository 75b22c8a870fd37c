// Speculative decoding's drafters: what proposes the tokens a sequence is likely to continue
// with, for the engine to verify as extra rows of one step (infer/engine.h). A drafter changes
// how fast a request runs, never its tokens: the sampling stage takes a drafted token only where
// the target's own draw gives it (Sampler::sample's `draft`), and the rows after the first
// rejected one are rolled back (KvCacheManager's lookahead).
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "infer/draft_guard.h"
#include "infer/sampler.h"

namespace difftx::infer {

// A proposal: the drafted tokens and, where a drafter drew them from a distribution of its own
// (a draft model on a sampled request), that distribution for each token; without it, each
// token is the drafter's sure choice (the point mass q = 1 at it).
struct Draft {
  std::vector<int32_t> tokens;
  std::vector<DraftDistribution> q;  // empty, or one per token

  // The distribution token i was drawn from; null for the point mass.
  const DraftDistribution* distribution(size_t i) const { return i < q.size() ? &q[i] : nullptr; }
  void truncate(size_t n) {
    tokens.resize(std::min(tokens.size(), n));
    q.resize(std::min(q.size(), n));
  }
  void clear() { truncate(0); }
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Up to `max` (>= 1) tokens likely to follow `tokens` (sequence `seq`'s prompt and output so
  // far), into `out` (cleared first; it may stay empty). `sampler`, where the request samples
  // and the drafter has a distribution of its own: the draws come from it (Sampler::propose)
  // and each token's distribution goes to out.q; without it, the drafter's likeliest tokens.
  // Every proposed token is one `guard` took, in turn (DraftGuard::take): a drafter that draws
  // draws among guard.allowed(), and the proposal ends where the guard says the request does.
  virtual void propose(uint64_t seq, std::span<const int32_t> tokens, int64_t max, Sampler* sampler,
                       DraftGuard& guard, Draft& out) = 0;
  // The sequence's prompt is computed (its first token is drawn next): a drafter with a cache of
  // its own reads the prompt now, as part of the prompt's processing, not of the first drafted step.
  virtual void prefill(uint64_t /*seq*/, std::span<const int32_t> /*prompt*/) {}
  // The sequence ended: what the drafter holds for it goes.
  virtual void release(uint64_t /*seq*/) {}
};

}  // namespace difftx::infer
