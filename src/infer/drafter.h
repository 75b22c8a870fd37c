// Speculative decoding's drafters: what proposes the tokens a sequence is likely to continue
// with, for the engine to verify as extra rows of one step (infer/engine.h). A drafter changes
// how fast a request runs, never its tokens: the sampling stage takes a drafted token only where
// the target's own draw gives it (Sampler::sample's `draft`), and the rows after the first
// rejected one are rolled back (KvCacheManager's lookahead).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace difftx::infer {

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Up to `max` (>= 1) tokens likely to follow `tokens` (sequence `seq`'s prompt and output so
  // far), into `out` (cleared first; it may stay empty).
  virtual void propose(uint64_t seq, std::span<const int32_t> tokens, int64_t max, std::vector<int32_t>& out) = 0;
  // The sequence's prompt is computed (its first token is drawn next): a drafter with a cache of
  // its own reads the prompt now, as part of the prompt's processing, not of the first drafted step.
  virtual void prefill(uint64_t /*seq*/, std::span<const int32_t> /*prompt*/) {}
  // The sequence ended: what the drafter holds for it goes.
  virtual void release(uint64_t /*seq*/) {}
};

}  // namespace difftx::infer
