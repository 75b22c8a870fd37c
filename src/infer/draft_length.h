// How many tokens a draft model proposes for a sequence (infer/model_drafter.h). Each drafted
// token costs a draft-model step and a verification row whether it is taken or not, so the
// k-th token pays only while the chance that the target takes it and every one before it,
// alpha^k under a per-token acceptance alpha, is above that cost relative to a target step.
// alpha is estimated per sequence from its verifications so far (counts that decay, so that a
// stretch the draft gets right or wrong moves it), starting from a prior that drafts the
// request's whole allowance: a draft that agrees with the target keeps its length, one that
// keeps missing drafts one token a step, and grows back when it agrees again.
#pragma once
#include <cstdint>

namespace difftx::infer {

class DraftLength {
 public:
  // The drafted tokens' cost against a target step's: a draft step (about 0.3-0.45 of a target
  // step for a Q4_0 copy of the target, measured in docs/BENCHMARKS.md) and a verification row.
  static constexpr double kCost = 0.4;
  // Each verification's weight against the next one's.
  static constexpr double kDecay = 0.9;
  // The prior: as if 4 tokens had been taken and half a token missed (alpha 0.89: 7 tokens).
  static constexpr double kPriorTaken = 4, kPriorMissed = 0.5;

  // The proposal's length for a request that allows `max` (>= 1) tokens: at least 1.
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
