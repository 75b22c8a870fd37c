#include "eval/retrieval/mqar_eval.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/timer.h"
#include "eval/retrieval/greedy_match.h"

namespace difftx::retrieval {
namespace {

// -log softmax(row)[target], in double.
double token_loss(const float* row, int64_t columns, int32_t target) {
  const double max = *std::max_element(row, row + columns);
  double sum = 0;
  for (int64_t j = 0; j < columns; ++j) sum += std::exp(row[j] - max);
  return std::log(sum) + max - row[target];
}

}  // namespace

MqarResult evaluate_mqar(const eval::LogitsForward& forward, const MqarVocabulary& vocab, int64_t vocab_size,
                         const MqarEvalOptions& o, const Interrupt& interrupt) {
  validate_mqar(o.spec, vocab);
  DIFFTX_CHECK(o.samples >= 1, "MQAR: samples ", o.samples, " must be positive");
  const int64_t length = mqar_length(o.spec);
  DIFFTX_CHECK(length <= forward.max_tokens, "MQAR: an episode of P = ", o.spec.pairs, " pairs and Q = ",
               o.spec.queries, " queries is ", length, " tokens, past the model's max_position_embeddings ",
               forward.max_tokens);
  DIFFTX_CHECK(vocab.end <= forward.columns, "MQAR: the tokenizer's ids reach ", vocab.end, " but the model has ",
               forward.columns, " logits");
  MqarResult r;
  r.options = o;
  GreedyMatcher matcher(vocab_size);
  std::vector<float> logits(o.spec.queries * forward.columns);
  std::vector<int64_t> rows(o.spec.queries);
  double loss_sum = 0;
  Timer timer;
  for (int64_t i = 0; i < o.samples; ++i) {
    const MqarSample s = make_mqar_sample(o.spec, vocab, derive_rng(o.seed, {uint64_t(i)}).next_u64());
    for (int64_t j = 0; j < o.spec.queries; ++j) rows[j] = s.answers[j] - 1;  // the query key predicts its value
    forward.run(s.tokens, rows, logits.data());
    for (int64_t j = 0; j < o.spec.queries; ++j) {
      const float* row = logits.data() + j * forward.columns;
      const int32_t answer = s.tokens[s.answers[j]];
      ++r.answers;
      r.correct += matcher.choose(row) == answer;
      loss_sum += token_loss(row, forward.columns, answer);
    }
    if (interrupt) interrupt();
  }
  r.loss = loss_sum / r.answers;
  r.seconds = timer.seconds();
  return r;
}

results::MqarResults mqar_results(const MqarResult& r) {
  return {.accuracy = r.accuracy(),
          .samples = r.options.samples,
          .pairs = r.options.spec.pairs,
          .queries = r.options.spec.queries,
          .loss = r.loss,
          .answers = r.answers,
          .sequence_tokens = mqar_length(r.options.spec),
          .seed = r.options.seed,
          .seconds = r.seconds};
}

}  // namespace difftx::retrieval
