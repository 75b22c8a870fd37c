#include "infer/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace difftx::infer {

namespace {
bool penalized(const SamplingOptions& o) { return o.presence_penalty != 0 || o.frequency_penalty != 0; }
}  // namespace

Sampler::Sampler(const SamplingOptions& o, int64_t vocab)
    : options_(o), vocab_(vocab), rng_(o.seed), order_(vocab), weights_(vocab) {
  DIFFTX_CHECK(vocab >= 1, "sampler: vocabulary size ", vocab, " must be positive");
  DIFFTX_CHECK(std::isfinite(o.temperature) && o.temperature >= 0, "--temperature ", o.temperature,
               " must be >= 0 (0 is greedy)");
  DIFFTX_CHECK(o.top_k >= 0, "--top-k ", o.top_k, " must be >= 0 (0 keeps every token)");
  DIFFTX_CHECK(o.top_p > 0 && o.top_p <= 1, "--top-p ", o.top_p, " must be in (0, 1] (1 keeps every token)");
  DIFFTX_CHECK(o.min_p >= 0 && o.min_p <= 1, "--min-p ", o.min_p, " must be in [0, 1] (0 keeps every token)");
  DIFFTX_CHECK(o.presence_penalty >= -2 && o.presence_penalty <= 2, "presence_penalty ", o.presence_penalty,
               " must be in [-2, 2]");
  DIFFTX_CHECK(o.frequency_penalty >= -2 && o.frequency_penalty <= 2, "frequency_penalty ", o.frequency_penalty,
               " must be in [-2, 2]");
  if (penalized(o)) counts_.assign(vocab, 0), penalized_.resize(vocab);
}

int32_t Sampler::sample(const float* logits, const uint64_t* allowed, int32_t draft) {
  for (int64_t i = 0; i < vocab_; ++i)
    DIFFTX_CHECK(std::isfinite(logits[i]), "sampler: the logit of token ", i, " is ", logits[i], ", not finite");
  if (counts_.empty()) return draw(logits, allowed, draft);
  for (int64_t i = 0; i < vocab_; ++i)
    penalized_[i] = static_cast<float>(logits[i] - options_.frequency_penalty * counts_[i] -
                                       (counts_[i] > 0 ? options_.presence_penalty : 0.0));
  const int32_t id = draw(penalized_.data(), allowed, draft);
  ++counts_[id];
  return id;
}

int32_t Sampler::take(const float* logits, int32_t id) {
  for (int64_t i = 0; i < vocab_; ++i)
    DIFFTX_CHECK(std::isfinite(logits[i]), "sampler: the logit of token ", i, " is ", logits[i], ", not finite");
  DIFFTX_CHECK(id >= 0 && id < vocab_, "token ", id, " is outside the vocabulary [0, ", vocab_, ")");
  if (!counts_.empty()) ++counts_[id];
  return id;
}

int32_t Sampler::draw(const float* logits, const uint64_t* allowed, int32_t draft) {
  // Most likely first; equal logits by ascending id, so the order is total and deterministic.
  const auto more_likely = [logits](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  // The candidates: every id, or the allowed ones in ascending order.
  int64_t candidates = vocab_;
  if (allowed) {
    candidates = 0;
    for (int64_t w = 0; w * 64 < vocab_; ++w)
      for (uint64_t bits = allowed[w]; bits; bits &= bits - 1) {
        const int64_t id = w * 64 + __builtin_ctzll(bits);
        if (id < vocab_) order_[candidates++] = static_cast<int32_t>(id);
      }
    DIFFTX_CHECK(candidates > 0, "sampler: the request's constraint allows no token here");
  }
  if (options_.temperature == 0) {
    if (allowed) return *std::min_element(order_.begin(), order_.begin() + candidates, more_likely);
    int32_t best = 0;
    for (int32_t i = 1; i < vocab_; ++i)
      if (more_likely(i, best)) best = i;
    return best;
  }
  if (!allowed) std::iota(order_.begin(), order_.end(), 0);
  int64_t kept = candidates;
  if (options_.top_k > 0 && options_.top_k < candidates) {
    kept = options_.top_k;
    std::nth_element(order_.begin(), order_.begin() + kept - 1, order_.begin() + candidates, more_likely);
  }
  if (options_.top_p < 1) std::sort(order_.begin(), order_.begin() + kept, more_likely);

  // p_i proportional to exp((l_i - l_max) / temperature), in double.
  float max_logit = logits[order_[0]];
  for (int64_t i = 1; i < kept; ++i) max_logit = std::max(max_logit, logits[order_[i]]);
  double total = 0;
  for (int64_t i = 0; i < kept; ++i)
    total += (weights_[i] = std::exp((static_cast<double>(logits[order_[i]]) - max_logit) / options_.temperature));
  if (options_.min_p > 0) {  // weights are relative to the most likely token's (whose weight is 1)
    int64_t n = 0;
    for (int64_t i = 0; i < kept; ++i)
      if (weights_[i] >= options_.min_p) order_[n] = order_[i], weights_[n++] = weights_[i];
    kept = n;
    total = 0;
    for (int64_t i = 0; i < kept; ++i) total += weights_[i];
  }
  if (options_.top_p < 1) {  // the shortest most-likely prefix holding top_p of the mass
    double mass = 0;
    int64_t n = 0;
    while (n < kept && mass < options_.top_p * total) mass += weights_[n++];
    kept = n;
    total = mass;
  }
  if (draft >= 0) {  // rejection sampling against the point mass at the draft
    const int64_t at = std::find(order_.begin(), order_.begin() + kept, draft) - order_.begin();
    const double p = at < kept ? weights_[at] : 0.0;
    if (p > 0 && (p >= total || rng_.uniform() * total < p)) return draft;
    if (at < kept) total -= weights_[at], weights_[at] = 0;  // the residual: p without the draft
  }
  const double u = rng_.uniform() * total;
  double cumulative = 0;
  for (int64_t i = 0; i < kept; ++i) {
    cumulative += weights_[i];
    if (u < cumulative) return order_[i];
  }
  for (int64_t i = kept; i-- > 0;)  // u within rounding of the total: the last id with weight
    if (weights_[i] > 0) return order_[i];
  return order_[kept - 1];
}

}  // namespace difftx::infer
