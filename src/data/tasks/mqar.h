// Multi-query associative recall (MQAR; Arora et al. 2023, "Zoology"): P key-value pairs, then
// Q of the keys again, each to be followed by its value. One episode is
//   EOT k1 v1 k2 v2 ... kP vP q1 a1 q2 a2 ... qQ aQ       (1 + 2P + 2Q ids)
// EOT is the tokenizer's end-of-text id (every document of the training data starts after one).
// Keys and values are ordinary tokens of the tokenizer: keys from the lower half of the ids
// [256, R) (single bytes excluded; R = one past the largest BPE rank, the specials lie above),
// values from the upper half. The P keys are distinct, the P values are distinct, the queries
// are Q distinct keys in random order and a_j is the value paired with q_j. The answers are
// teacher-forced, so one forward pass grades an episode: the prediction at q_j must be a_j.
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "data/tokenizer.h"

namespace difftx::retrieval {

struct MqarVocabulary {
  int32_t end_of_text = 0;
  int32_t first_key = 0, first_value = 0, end = 0;  // keys [first_key, first_value), values [first_value, end)
};

// Errors: a tokenizer with too few ordinary tokens (fewer than 2 above the single bytes).
MqarVocabulary mqar_vocabulary(const data::Tokenizer& tokenizer);

struct MqarSpec {
  int64_t pairs = 16;   // P
  int64_t queries = 8;  // Q, 1 <= Q <= P
};

struct MqarSample {
  std::vector<int32_t> tokens;
  std::vector<int64_t> answers;  // positions of a_1 .. a_Q in tokens
};

// Errors name the value: P < 1, Q outside [1, P], more pairs than the key or value pool holds.
void validate_mqar(const MqarSpec& spec, const MqarVocabulary& vocab);
inline int64_t mqar_length(const MqarSpec& spec) { return 1 + 2 * spec.pairs + 2 * spec.queries; }

// Appends one episode to sample (answer positions counted from the start of sample.tokens).
void append_mqar_episode(const MqarSpec& spec, const MqarVocabulary& vocab, Rng& rng, MqarSample& sample);
// One episode; the same (spec, seed) gives the same sample.
MqarSample make_mqar_sample(const MqarSpec& spec, const MqarVocabulary& vocab, uint64_t seed);

}  // namespace difftx::retrieval
