#include "infer/logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace difftx::infer {

float token_logprob(const float* logits, int64_t vocab, int32_t id, int top, std::vector<TokenLogprob>& alternatives) {
  float max_logit = logits[0];
  for (int64_t i = 1; i < vocab; ++i) max_logit = std::max(max_logit, logits[i]);
  double total = 0;
  for (int64_t i = 0; i < vocab; ++i) total += std::exp(static_cast<double>(logits[i]) - max_logit);
  const double log_total = max_logit + std::log(total);
  alternatives.clear();
  if (top > 0) {
    std::vector<int32_t> ids(vocab);
    std::iota(ids.begin(), ids.end(), 0);
    const int64_t k = std::min<int64_t>(top, vocab);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [logits](int32_t a, int32_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    for (int64_t i = 0; i < k; ++i)
      alternatives.push_back({ids[i], static_cast<float>(logits[ids[i]] - log_total)});
  }
  return static_cast<float>(logits[id] - log_total);
}

int64_t token_rank(const float* logits, int64_t vocab, int32_t id) {
  int64_t higher = 0;
  for (int64_t i = 0; i < vocab; ++i) higher += logits[i] > logits[id];
  return 1 + higher;
}

}  // namespace difftx::infer
