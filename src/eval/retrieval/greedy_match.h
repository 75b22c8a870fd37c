// Exact match of greedy decoding, from one teacher-forced forward pass. Greedy decoding of a
// prompt produces exactly the answer ids iff, with the answer appended to the prompt, the
// greedy choice at each position just before an answer id is that id: up to the first miss,
// what greedy has generated IS the appended answer, so the two runs see the same prefix.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "data/tasks/niah.h"
#include "infer/sampler.h"

namespace difftx::retrieval {

// The positions whose logits grade an answer: the one before each of its ids,
// [answer.begin - 1, answer.end - 1). Errors: an empty span or one starting at 0.
std::vector<int64_t> answer_rows(Span answer);

class GreedyMatcher {
 public:
  // Greedy picks among ids [0, vocab) (the tokenizer's ids; a model may have more columns),
  // the largest logit and the lowest id among equals, exactly as `difftx generate --temperature 0`.
  explicit GreedyMatcher(int64_t vocab);

  // The greedy id after a row of logits (a non-finite logit is an error).
  int32_t choose(const float* row) { return greedy_.sample(row); }

  // logits [answer.size(), columns], the rows of answer_rows(): true when greedy picks
  // answer[i] from row i for every i.
  bool reproduces(const float* logits, int64_t columns, std::span<const int32_t> answer);

 private:
  infer::Sampler greedy_;
};

}  // namespace difftx::retrieval
