// MQAR accuracy and loss (mqar.h): episodes run through a forward pass; an answer is right when
// the greedy choice at its query key is the paired value (answers are single ids, so this is
// greedy exact match), and the loss is the mean cross-entropy of the answers over all columns.
#pragma once
#include <cstdint>

#include "core/interrupt.h"
#include "data/tasks/mqar.h"
#include "eval/logits_forward.h"
#include "results/results.h"

namespace difftx::retrieval {

struct MqarEvalOptions {
  MqarSpec spec;
  int64_t samples = 200;  // episodes
  uint64_t seed = 1;
};

struct MqarResult {
  MqarEvalOptions options;
  int64_t answers = 0, correct = 0;
  double loss = 0;  // mean over answers, nats
  double seconds = 0;
  double accuracy() const { return answers ? static_cast<double>(correct) / answers : 0.0; }
};

// vocab_size: ids greedy may choose (the tokenizer's). Errors before any forward: bad spec
// (validate_mqar), samples < 1, an episode longer than forward.max_tokens. `interrupt` is called
// after every episode.
MqarResult evaluate_mqar(const eval::LogitsForward& forward, const MqarVocabulary& vocab, int64_t vocab_size,
                         const MqarEvalOptions& options, const Interrupt& interrupt = {});

// The "mqar" object of the results schema (results/results.h): accuracy, samples, pairs,
// queries, plus loss, answers, seed and the sequence length.
results::MqarResults mqar_results(const MqarResult& result);

}  // namespace difftx::retrieval
