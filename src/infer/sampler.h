// Next-token sampling from logits: presence and frequency penalties over the tokens drawn so far,
// temperature, top-k, top-p (nucleus) and min-p, seeded so that the same seed and logits give the
// same tokens on every machine (core/rng.h).
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace difftx::infer {

struct SamplingOptions {
  double temperature = 0.8;  // 0: greedy (the largest logit; the lowest id among equals)
  int64_t top_k = 0;         // keep the k most likely tokens; 0 keeps all
  double top_p = 1.0;        // keep the most likely tokens whose probability sums to >= p; 1 keeps all
  uint64_t seed = 1;
  double min_p = 0.0;        // keep tokens with probability >= min_p times the largest; 0 keeps all
  // OpenAI's penalties: logit - presence * [count > 0] - frequency * count, count = how often
  // the token was drawn so far; each in [-2, 2], 0 = off.
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
};

class Sampler {
 public:
  // Samples ids in [0, vocab) (a model's logits may have more columns than its tokenizer has
  // tokens: those are never drawn). Bad options are errors naming the option.
  Sampler(const SamplingOptions& options, int64_t vocab);

  // One id from logits [>= vocab], which are not modified. A non-finite logit is an error naming
  // the token. The drawn id counts towards the penalties. No allocation. `allowed`, if given, is
  // a bitset over [0, vocab) (bit i of word i / 64): only those ids are candidates, as if the
  // others' logits were -infinity (an error when it allows none).
  // `draft` (>= 0): a token proposed by a drafter (speculative decoding), verified here, the one
  // place a draft is accepted or rejected: the draft is accepted when the returned id equals it.
  // Greedy returns the largest logit as without a draft. Sampling is rejection sampling against
  // the point mass at the draft (q = 1 there): the draft is taken with probability p(draft),
  // else an id is drawn from p with the draft removed (norm(max(0, p - q))), so the returned id
  // follows p exactly as a draw without a draft does.
  int32_t sample(const float* logits, const uint64_t* allowed = nullptr, int32_t draft = -1);
  // Takes `id` as if drawn (it counts towards the penalties; the logits are checked as sample's).
  int32_t take(const float* logits, int32_t id);

 private:
  // Temperature, top-k, min-p, top-p and the draw (with the draft's verification).
  int32_t draw(const float* logits, const uint64_t* allowed, int32_t draft);

  SamplingOptions options_;
  int64_t vocab_;
  Rng rng_;
  std::vector<int32_t> order_;   // candidate ids, most likely first once sorted
  std::vector<double> weights_;  // unnormalised probabilities of order_
  std::vector<int32_t> counts_;  // times each id was drawn (penalties only)
  std::vector<float> penalized_; // the logits after the penalties (penalties only)
};

}  // namespace difftx::infer
