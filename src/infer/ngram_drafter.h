// Prompt lookup, the drafter that needs no model: the longest n-gram that ends the sequence
// (n from kMaxNgram down to kMinNgram) is looked up earlier in its prompt and output, and what
// followed its latest earlier occurrence is proposed. Extractive requests (quote, repeat, edit
// or continue a given text) and outputs that loop accept most of it. Past the sequence's end
// the proposal continues with itself (a loop of period p repeats every p tokens).
#pragma once
#include "infer/drafter.h"

namespace difftx::infer {

class NgramDrafter : public Drafter {
 public:
  static constexpr int64_t kMaxNgram = 4, kMinNgram = 2;
  void propose(uint64_t seq, std::span<const int32_t> tokens, int64_t max, std::vector<int32_t>& out) override;
};

}  // namespace difftx::infer
