// Next-token sampling from logits: temperature, top-k and top-p (nucleus), seeded so that the
// same seed and logits give the same tokens on every machine (core/rng.h).
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace difftx {

struct SamplingOptions {
  double temperature = 0.8;  // 0: greedy (the largest logit; the lowest id among equals)
  int64_t top_k = 0;         // keep the k most likely tokens; 0 keeps all
  double top_p = 1.0;        // keep the most likely tokens whose probability sums to >= p; 1 keeps all
  uint64_t seed = 1;
};

class Sampler {
 public:
  // Samples ids in [0, vocab) (a model's logits may have more columns than its tokenizer has
  // tokens: those are never drawn). Bad options are errors naming the option.
  Sampler(const SamplingOptions& options, int64_t vocab);

  // One id from logits [>= vocab]. A non-finite logit is an error naming the token. No
  // allocation.
  int32_t sample(const float* logits);

 private:
  SamplingOptions options_;
  int64_t vocab_;
  Rng rng_;
  std::vector<int32_t> order_;   // candidate ids, most likely first once sorted
  std::vector<double> weights_;  // unnormalised probabilities of order_
};

}  // namespace difftx
