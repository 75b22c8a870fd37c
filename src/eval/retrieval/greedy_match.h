// Exact match of greedy decoding, from one teacher-forced forward pass. Greedy decoding of a
// prompt produces exactly the answer ids iff, with the answer appended to the prompt, the
// greedy choice at each position just before an answer id is that id: up to the first miss,
// what greedy has generated IS the appended answer, so the two runs see the same prefix.
#pragma once
#include <cstdint>
#include <span>

#include "eval/retrieval/niah.h"
#include "infer/sampler.h"

namespace difftx::retrieval {

class GreedyMatcher {
 public:
  // Greedy picks among ids [0, vocab) (the tokenizer's ids; a model may have more columns),
  // the largest logit and the lowest id among equals, exactly as `difftx generate --temperature 0`.
  explicit GreedyMatcher(int64_t vocab);

  // The greedy id after the row of logits (a non-finite logit is an error).
  int32_t choose(const float* row) { return greedy_.sample(row); }

  // logits [tokens.size(), columns] of tokens (row t predicts token t + 1); answer.begin >= 1.
  // True when greedy decoding of tokens[0, answer.begin) yields tokens[answer] next.
  bool reproduces(const float* logits, int64_t columns, std::span<const int32_t> tokens, Span answer);

 private:
  Sampler greedy_;
};

}  // namespace difftx::retrieval
