// Prompt lookup, the drafter that needs no model: the longest n-gram that ends the sequence
// (n from kMaxNgram down to kMinNgram) is looked up earlier in its prompt and output, and what
// followed its latest earlier occurrence is proposed. Extractive requests (quote, repeat, edit
// or continue a given text) and outputs that loop accept most of it. Past the sequence's end
// the proposal continues with itself (a loop of period p repeats every p tokens).
//
// The proposal ends before the first token the request's guard refuses, and after one that
// would end the request (DraftGuard::keep).
//
// A lookup is right for a stretch and then wrong from its first miss on, so the proposal's
// length follows the sequence's last verification: one more than the tokens it accepted after
// a miss, two more after a proposal accepted whole (at most `max`). Rows of tokens that would
// only be rejected cost a verification step time; a lookup that keeps being right grows back.
#pragma once
#include <unordered_map>

#include "infer/drafter.h"

namespace difftx::infer {

class NgramDrafter : public Drafter {
 public:
  static constexpr int64_t kMaxNgram = 4, kMinNgram = 2;
  void propose(uint64_t seq, std::span<const int32_t> tokens, int64_t max, Sampler* sampler, DraftGuard& guard,
               Draft& out) override;
  void release(uint64_t seq) override { last_.erase(seq); }

 private:
  struct Last {
    size_t n = 0;                   // the sequence's length when it was proposed
    std::vector<int32_t> proposed;  // what followed then
    int64_t window = 0;             // the length it was allowed
  };
  std::unordered_map<uint64_t, Last> last_;
};

}  // namespace difftx::infer
