// Requests for the engine (infer/engine.h) as an embedding program makes them: a text prompt
// framed as `difftx generate` frames it, token ids as given, or chat messages through the model's
// chat template; sampling options defaulting to the directory's generation_config.json.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/loaded_model.h"
#include "infer/engine.h"
#include "infer/model_prompt.h"

namespace difftx::api {

// Unset values take the directory's generation_config.json, else `difftx generate`'s defaults.
struct GenerateArgs {
  std::optional<int64_t> max_new_tokens, top_k;
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  double presence_penalty = 0, frequency_penalty = 0;
  std::vector<std::pair<int32_t, float>> logit_bias;  // infer::SamplingOptions::logit_bias
  uint64_t seed = 1;
  std::vector<std::string> stop;
  bool logprobs = false;
  int top_logprobs = 0;
  std::shared_ptr<const infer::TokenConstraintSource> constraint;  // none: any token (a JSON schema's grammar)
  bool skip_special_tokens = true;  // vLLM's: the special tokens the model writes are no text (skipped_special_tokens)
  // vLLM's: ids that end the text too where drawn (no text themselves; at most infer::kMaxStopTokenIds);
  // ignore_eos: the model's end-of-sequence ids (and a chat template's end of turn) do not stop it;
  // include_stop_str: the text ends after a stop string, not before; min_tokens: no stop token or
  // stop string before that many tokens.
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false, include_stop_str = false;
  int64_t min_tokens = 0;
  std::vector<std::string> bad_words;  // vLLM's: words never written whole (serve/bad_words.h); needs the tokenizer
};

// The special tokens the text of a reply leaves out when it skips them (the server's
// skip_special_tokens, vLLM's, default true), ascending: a completion (chat null) all of them, a
// chat reply through `chat` all but its reasoning block's markers (its text keeps the block).
// They are still tokens: counted, and in logprobs.
std::vector<int32_t> skipped_special_tokens(const data::Tokenizer& tokenizer, const chat::ChatTemplate* chat);

// The request options of `a` with the defaults filled in (checked when the engine takes them).
infer::RequestOptions request_options(const LoadedModel& m, const GenerateArgs& a);

// The prompt framed as `difftx generate` frames it (the frame's prefix, then the text); it stops
// at the model's end-of-sequence ids. Needs the tokenizer.
infer::Request text_request(const LoadedModel& m, const std::string& prompt, const GenerateArgs& a);
// The ids as they are; it stops at the model's end-of-sequence ids (those of config.json and
// generation_config.json, and the tokenizer's end of text where the frame adds it).
infer::Request ids_request(const LoadedModel& m, std::vector<int32_t> ids, const GenerateArgs& a);
// Messages (a JSON array of {role, content}) through the chat template with the assistant's turn
// opened, as `difftx generate --chat` does; the template's end-of-turn token stops it too.
infer::Request chat_request(const LoadedModel& m, const nlohmann::json& messages, const GenerateArgs& a);

// `difftx generate --chat`'s prompt: the messages rendered through tmpl and encoded as
// transformers' apply_chat_template does, after the frame's prefix where the rendering lacks it.
infer::FramedPrompt frame_chat_prompt(const data::Tokenizer& tokenizer, const data::GenerationDefaults& defaults,
                                      const chat::ChatTemplate& tmpl, const nlohmann::json& messages,
                                      const model::ModelConfig& config, const std::string& dir);

// `base` with the ids that may be drawn limited to the tokenizer's vocabulary, where the model has
// a tokenizer (a model's logits may have more columns than its tokenizer has tokens), and the
// model's draft (LoadOptions::draft) where it was loaded with one.
infer::EngineOptions engine_options(const LoadedModel& m, infer::EngineOptions base = {});

}  // namespace difftx::api
