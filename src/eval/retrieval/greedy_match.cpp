#include "eval/retrieval/greedy_match.h"

#include <numeric>

#include "core/error.h"

namespace difftx::retrieval {

std::vector<int64_t> answer_rows(Span answer) {
  DIFFTX_CHECK(answer.begin >= 1 && answer.begin < answer.end, "greedy match: answer span [", answer.begin, ", ",
               answer.end, ") must be non-empty and come after the first token");
  std::vector<int64_t> rows(answer.size());
  std::iota(rows.begin(), rows.end(), answer.begin - 1);
  return rows;
}

GreedyMatcher::GreedyMatcher(int64_t vocab) : greedy_(infer::SamplingOptions{.temperature = 0}, vocab) {}

bool GreedyMatcher::reproduces(const float* logits, int64_t columns, std::span<const int32_t> answer) {
  for (size_t i = 0; i < answer.size(); ++i)
    if (choose(logits + static_cast<int64_t>(i) * columns) != answer[i]) return false;
  return true;
}

}  // namespace difftx::retrieval
