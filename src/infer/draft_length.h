// How many tokens a draft model proposes for a sequence (infer/model_drafter.h). Each drafted
// token costs a draft-model step and a verification row whether it is taken or not. With a
// per-token acceptance alpha, a proposal of k tokens gives 1 + alpha + ... + alpha^k tokens a
// step (the target's own draw after the last one taken) for 1 + kCost k target steps' time; the
// window is the k that gets the most tokens for the time. alpha is estimated per sequence from
// its verifications so far (counts that decay, so that a stretch the draft gets right or wrong
// moves it), starting from a prior: a draft that agrees with the target drafts several tokens,
// one that keeps missing one token a step, and grows back when it agrees again.
#pragma once
#include <cstdint>

namespace difftx::infer {

class DraftLength {
 public:
  // A drafted token's cost against a target step: a draft step (0.3-0.45 of a target step for a
  // Q4_0 copy of the target) and a verification row. With it the rule above, at that
  // self-draft's acceptance (0.917), predicts its measured K sweep (docs/BENCHMARKS.md: 1.60x at
  // K = 4, 1.59x at 6, 1.47x at 8, against 1.63x, 1.61x, 1.55x) and chooses 4.
  static constexpr double kCost = 0.4;
  // Each verification's weight against the next one's.
  static constexpr double kDecay = 0.9;
  // The prior: as if 4 tokens had been taken and half a token missed (alpha 0.89: 4 tokens).
  static constexpr double kPriorTaken = 4, kPriorMissed = 0.5;

  // The proposal's length for a request that allows `max` (>= 1) tokens: at least 1, at most max.
  int64_t window(int64_t max) const;
  // A verification: the target took `taken` drafted tokens, then rejected one (`missed`) or ran
  // out of drafted tokens (or ended) without a miss.
  void observe(int64_t taken, bool missed);
  // The estimated chance that the target takes a drafted token.
  double acceptance() const { return (taken_ + kPriorTaken) / (taken_ + missed_ + kPriorTaken + kPriorMissed); }

 private:
  double taken_ = 0, missed_ = 0;
};

}  // namespace difftx::infer
