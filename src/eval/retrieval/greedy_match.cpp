#include "eval/retrieval/greedy_match.h"

#include "core/error.h"

namespace difftx::retrieval {

GreedyMatcher::GreedyMatcher(int64_t vocab) : greedy_(SamplingOptions{.temperature = 0}, vocab) {}

bool GreedyMatcher::reproduces(const float* logits, int64_t columns, std::span<const int32_t> tokens, Span answer) {
  DIFFTX_CHECK(answer.begin >= 1 && answer.begin < answer.end && answer.end <= static_cast<int64_t>(tokens.size()),
               "greedy match: answer span [", answer.begin, ", ", answer.end, ") must be non-empty, after the first token ",
               "and inside the ", tokens.size(), " tokens");
  for (int64_t p = answer.begin; p < answer.end; ++p)
    if (choose(logits + (p - 1) * columns) != tokens[p]) return false;
  return true;
}

}  // namespace difftx::retrieval
