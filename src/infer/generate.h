// Text generation over token ids: prefill the prompt, then sample and decode one token at a
// time until max_new_tokens, a stop token or a full context. Timing of both phases is part
// of the result (tokens/s for `difftx generate`).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infer/engine.h"
#include "infer/sampler.h"
#include "infer/token_constraint.h"
#include "kernels/attention/decode_attention.h"
#include "model/model.h"

namespace difftx::infer {

struct GenerateOptions {
  SamplingOptions sampling;
  int64_t max_new_tokens = 128;
  int64_t context = 0;      // KV cache capacity; 0: max_position_embeddings
  kernels::KvStorage kv = kernels::KvStorage::bf16;  // how the KV cache stores keys and values
  int64_t sample_vocab = 0; // ids that may be drawn, [0, sample_vocab); 0: the model's vocab_size
  std::vector<int32_t> stop_tokens;  // generation ends when one of these is drawn (not passed on)
  std::vector<std::string> stop_strings;  // the text ends before the first of these (RequestOptions::stop_strings)
  std::shared_ptr<const TokenConstraintSource> constraint;  // which tokens may be drawn (a grammar); none: any
  // Speculative decoding (EngineOptions::draft): the drafter, tokens per step, the draft model.
  DraftMode draft = DraftMode::none;
  int64_t draft_tokens = kDefaultDraftTokens;
  const model::Model* draft_model = nullptr;
  OptionSpelling spelling = OptionSpelling::field;  // how errors name these options (EngineOptions::spelling)
  // The model's tokenizer, for the events' text (TokenEvent::text; none: no text), and the tokens
  // that write none (RequestOptions::silent_tokens: the special tokens a reply leaves out).
  const data::Tokenizer* tokenizer = nullptr;
  std::vector<int32_t> silent_tokens;
};

struct GenerateResult {
  int64_t prompt_tokens = 0;
  int64_t new_tokens = 0;    // ids passed to on_event
  int64_t decode_steps = 0;  // tokens run through the decode step
  double prefill_seconds = 0, decode_seconds = 0;  // decode_seconds includes sampling
  bool stopped_at_stop_token = false;
  bool context_full = false;
  FinishReason finish = FinishReason::none;  // how the request ended
  std::string error;                         // the engine's message, for FinishReason::error
  int64_t draft_tokens = 0, draft_accepted = 0;  // speculative decoding: drafted and verified / accepted
};

// on_event(e) is called with each of the request's events as soon as it is made (stream it from
// there): a new id (e.id >= 0) and the text it completes; the last one may carry held-back text
// and no id.
GenerateResult generate(const model::Model& model, std::span<const int32_t> prompt, const GenerateOptions& options,
                        const std::function<void(const TokenEvent&)>& on_event);

}  // namespace difftx::infer
