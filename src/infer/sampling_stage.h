// The stage after a step's forward: for each sequence whose last row gave logits, the next token
// is drawn (draw_token, the one place a token is chosen: the request's forced token or its
// sampler), then checked against the stop tokens, given its logprobs, appended to the text with
// its stop strings and the length limits, and streamed. It also sends a sequence's last event.
// With drafted tokens (speculative decoding) each of their rows gives the next token in turn,
// each through the same checks, for as long as the drawn token is the drafted one.
// It knows nothing of the KV cache: the engine gives an ending sequence's slots back.
#pragma once
#include <cstdint>
#include <string>

#include "infer/engine.h"
#include "infer/sequence.h"

namespace difftx::infer {

class SamplingStage {
 public:
  // vocab: the ids that may be drawn; logits_width: the values of a row of logits (the model's
  // vocab_size); context: the most tokens a sequence holds. Counts generated and finished
  // requests, and drafted and accepted tokens, into `counters`.
  SamplingStage(const data::Tokenizer* tokenizer, int64_t vocab, int64_t logits_width, int64_t context,
                EngineStats& counters);

  // Draws the sequence's next token from its row of logits and streams it; returns why the
  // sequence ends (its last event sent), FinishReason::none when it goes on. With a draft
  // (Sequence::draft, n tokens), `logits` holds 1 + n rows: row i verifies draft token i, and
  // the tokens go on while each drawn one is the drafted one (after n of them, row n draws one
  // more); Sequence::draft is left holding the accepted ones.
  // A request that wants no token (max_new_tokens 0: its prompt's scores only) ends here.
  FinishReason advance(Sequence& s, const float* logits);
  // The logits of a scored prompt's row at `position` (before its last): the next prompt token's
  // score (Sequence::prompt_scores).
  void score_prompt(Sequence& s, int64_t position, const float* logits) const;
  // Sends the sequence's last event: `event` with the held-back text, the reason and the counts
  // (and the prompt's scores where it is the first event).
  void finish(Sequence& s, FinishReason reason, TokenEvent event = {}, const std::string& error = {});
  const data::Tokenizer* tokenizer() const { return tokenizer_; }  // how a token reads (null: no text)

 private:
  // The token the sequence takes after these logits (`draft`: the drafted one, or -1; `q`: the
  // distribution it was drawn from, null for the point mass).
  int32_t draw_token(Sequence& s, const float* logits, int32_t draft, const DraftDistribution* q);
  // The ids the sequence may draw next (a bitset over the ids; null: any): its constraint's, less
  // its stop tokens before its min_tokens and its bad words' ends (unless that leaves none).
  const uint64_t* allowed(Sequence& s) const;
  // One token from one row: drawn, checked, streamed; `id` is set to the drawn one (-1: none).
  FinishReason take_one(Sequence& s, const float* logits, int32_t draft, const DraftDistribution* q, int32_t& id);

  const data::Tokenizer* tokenizer_;
  int64_t vocab_, logits_width_, context_;
  EngineStats& counters_;
};

}  // namespace difftx::infer
