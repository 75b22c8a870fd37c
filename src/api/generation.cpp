#include "api/generation.h"

#include <algorithm>

#include "api/draft.h"
#include "core/error.h"
#include "serve/bad_words.h"
#include "serve/chat_prompt.h"
#include "serve/reasoning.h"
#include "serve/reply_reader.h"

namespace difftx::api {

using infer::Request;

infer::RequestOptions request_options(const LoadedModel& m, const GenerateArgs& a) {
  const data::GenerationDefaults& d = m.defaults;
  infer::RequestOptions o;
  o.max_new_tokens = a.max_new_tokens.value_or(d.max_new_tokens.value_or(o.max_new_tokens));  // checked by the engine
  o.sampling.temperature = a.temperature.value_or(d.temperature.value_or(o.sampling.temperature));
  o.sampling.top_k = a.top_k.value_or(d.top_k.value_or(o.sampling.top_k));
  o.sampling.top_p = a.top_p.value_or(d.top_p.value_or(o.sampling.top_p));
  o.sampling.min_p = a.min_p.value_or(d.min_p.value_or(o.sampling.min_p));
  o.sampling.repetition_penalty = a.repetition_penalty.value_or(d.repetition_penalty.value_or(1.0));
  o.sampling.presence_penalty = a.presence_penalty;
  o.sampling.logit_bias = a.logit_bias;
  o.sampling.frequency_penalty = a.frequency_penalty;
  o.sampling.seed = a.seed;
  o.stop_strings = a.stop;
  o.include_stop_str = a.include_stop_str;
  o.min_tokens = a.min_tokens;  // checked by the engine
  DIFFTX_CHECK(a.bad_words.size() <= infer::kMaxBadWords / 2, "bad_words holds ", a.bad_words.size(),
               " words: at most ", infer::kMaxBadWords / 2);
  if (!a.bad_words.empty()) o.bad_words = serve::bad_word_sequences(m.require_tokenizer(), a.bad_words);
  o.logprobs = a.logprobs;
  o.top_logprobs = a.top_logprobs;
  o.constraint = a.constraint;
  return o;
}

std::vector<int32_t> skipped_special_tokens(const data::Tokenizer& tokenizer, const chat::ChatTemplate* chat) {
  serve::ReplyFormat format;  // a completion's: nothing read back (the server's /v1/completions)
  if (chat) format.reasoning = serve::reasoning_markers_of_model(chat->source, tokenizer);
  return serve::unread_special_tokens(tokenizer, format);
}

namespace {

// The request's stop ids: the frame's (the model's end of sequence, a chat's end of turn) unless
// ignore_eos, then the caller's.
std::vector<int32_t> stop_tokens(std::vector<int32_t> frame, const GenerateArgs& a) {
  DIFFTX_CHECK(a.stop_token_ids.size() <= infer::kMaxStopTokenIds, "stop_token_ids holds ", a.stop_token_ids.size(),
               " ids: at most ", infer::kMaxStopTokenIds);
  if (a.ignore_eos) frame.clear();
  frame.insert(frame.end(), a.stop_token_ids.begin(), a.stop_token_ids.end());
  return frame;
}

}  // namespace

Request text_request(const LoadedModel& m, const std::string& prompt, const GenerateArgs& a) {
  const infer::FramedPrompt framed =
      infer::frame_prompt(m.require_tokenizer(), m.defaults, prompt, m.model.config, m.dir.string());
  Request r;
  r.prompt = framed.ids;
  r.options = request_options(m, a);
  r.options.stop_tokens = stop_tokens(framed.stop, a);
  if (a.skip_special_tokens) r.options.silent_tokens = skipped_special_tokens(*m.tokenizer, nullptr);
  return r;
}

Request ids_request(const LoadedModel& m, std::vector<int32_t> ids, const GenerateArgs& a) {
  Request r;
  r.options = request_options(m, a);
  r.options.stop_tokens = stop_tokens(
      m.tokenizer ? infer::frame_prompt(*m.tokenizer, m.defaults, "", m.model.config, m.dir.string()).stop
                  : m.defaults.eos_ids,
      a);
  if (m.tokenizer && a.skip_special_tokens) r.options.silent_tokens = skipped_special_tokens(*m.tokenizer, nullptr);
  r.prompt = std::move(ids);
  return r;
}

infer::FramedPrompt frame_chat_prompt(const data::Tokenizer& tokenizer, const data::GenerationDefaults& defaults,
                                      const chat::ChatTemplate& tmpl, const nlohmann::json& messages,
                                      const model::ModelConfig& config, const std::string& dir) {
  infer::FramedPrompt framed = infer::frame_prompt(tokenizer, defaults, "", config, dir);
  const std::vector<int32_t> prefix(framed.ids.begin(), framed.ids.begin() + framed.prefix);
  framed.ids = serve::encode_chat_prompt(tokenizer, prefix, tmpl.render(messages, true));
  for (int32_t id : serve::chat_stop_ids(tmpl, tokenizer))
    if (std::find(framed.stop.begin(), framed.stop.end(), id) == framed.stop.end()) framed.stop.push_back(id);
  return framed;
}

Request chat_request(const LoadedModel& m, const nlohmann::json& messages, const GenerateArgs& a) {
  const data::Tokenizer& tokenizer = m.require_tokenizer();
  const chat::ChatTemplate& tmpl = m.require_chat_template();
  const infer::FramedPrompt framed =
      frame_chat_prompt(tokenizer, m.defaults, tmpl, messages, m.model.config, m.dir.string());
  Request r;
  r.prompt = framed.ids;
  r.options = request_options(m, a);
  r.options.stop_tokens = stop_tokens(framed.stop, a);
  if (a.skip_special_tokens) r.options.silent_tokens = skipped_special_tokens(tokenizer, &tmpl);
  return r;
}

infer::EngineOptions engine_options(const LoadedModel& m, infer::EngineOptions base) {
  if (m.tokenizer) base.sample_vocab = m.tokenizer->vocab_size();
  if (m.draft && m.draft->mode != infer::DraftMode::none) m.draft->apply(base);
  return base;
}

}  // namespace difftx::api
