// OpenAI-style request bodies -> what the engine runs, as pure functions: every field is checked
// (type, range, whether it is supported) and a bad one is an ApiError naming it. Tokenizing
// and templating happen later (generation.h); these need no model.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "infer/engine.h"
#include "serve/output_request.h"

namespace difftx::serve {

// What the parser checks against: the served model's name and sizes, and its sampling defaults.
struct ServeLimits {
  std::string model_name;
  int64_t vocab_size = 0;
  int64_t context = 0;
  std::optional<double> default_temperature, default_top_p, default_min_p, default_repetition_penalty;
  std::optional<int64_t> default_top_k;
  int64_t max_choices = 16;  // n times the number of prompts
  bool draft_model = false;  // the server has a draft model (`draft`: "model" may be asked for)
};

// Fields that completions and chat share.
struct GenerationParams {
  infer::RequestOptions options;              // max_new_tokens unset here: see max_tokens
  std::optional<int64_t> max_tokens;   // none: until the context ends
  std::optional<uint64_t> seed;        // choice i samples with seed + i; none: a random seed per choice
  int64_t n = 1;
  bool stream = false, include_usage = false;
  bool logprobs = false;               // report the logprob of each token (and top_logprobs alternatives)
  // vLLM's: the reply's text leaves out the special tokens its parsers do not read (reply_reader.h's
  // unread_special_tokens); false keeps every one. Logprobs' tokens show them either way.
  bool skip_special_tokens = true;
  // vLLM's: more ids that end the text where drawn, and whether the model's own end-of-sequence ids
  // (and the chat template's end of turn) stop it (ignore_eos: they do not).
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  std::vector<std::string> bad_words;  // vLLM's: words never written whole (serve/bad_words.h)
  // vLLM's truncate_prompt_tokens: a longer prompt keeps its last k tokens; -1: as many as leave
  // max_tokens (else one) to generate.
  std::optional<int64_t> truncate_prompt_tokens;
};

struct Prompt {
  std::optional<std::string> text;  // a text prompt, or
  std::vector<int32_t> ids;         // token ids as given
};

struct CompletionRequest {
  GenerationParams params;
  std::vector<Prompt> prompts;  // one per prompt of a batch; choices are prompt-major
  OutputRequest output;         // response_format, grammar
  bool echo = false;            // the choices' text and logprobs start with the prompt's
};

struct ChatRequest {
  GenerationParams params;
  // [{role, content, ...}], content a string or a list of text parts (content_text), tool calls'
  // arguments as objects; keys in the order the client wrote them (templates print tool calls
  // with tojson).
  nlohmann::ordered_json messages;
  // Extra variables for the template: chat_template_kwargs, and `tools` and `documents` when given.
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  OutputRequest output;         // response_format, grammar, tools, max_reasoning_tokens
  // vLLM's: the prompt ends with the template's generation prompt (default), or (with
  // add_generation_prompt false) continues the final assistant message where its text ends.
  bool add_generation_prompt = true, continue_final_message = false;
};

// A message's content as text: a string as it is, a list's text parts joined by newlines (as vLLM
// joins them for a template that takes a string).
std::string content_text(const nlohmann::ordered_json& content);

struct TokenizeRequest {
  std::string text;
  bool add_special = false;  // put the model's prompt prefix (BOS) first
};

// The body as JSON (depth-bounded, no repeated keys); malformed -> 400.
nlohmann::json parse_body(std::string_view body);
// The same body with its keys in the order written (checked as parse_body checks it).
nlohmann::ordered_json parse_ordered_body(std::string_view body);
// JSON text inside a request (a schema, a tool call's arguments, sent as a string), checked as a
// body is (nesting depth, repeated keys, keys per object), in the order written; difftx::Error
// naming `source` where it is not such JSON.
nlohmann::ordered_json parse_request_json_text(std::string_view text, const std::string& source);

// `ordered`: the same body with its keys in the order written (parse_ordered_body).
CompletionRequest parse_completion_request(const nlohmann::json& body, const nlohmann::ordered_json& ordered,
                                           const ServeLimits& limits);
ChatRequest parse_chat_request(const nlohmann::json& body, const nlohmann::ordered_json& ordered,
                               const ServeLimits& limits);
TokenizeRequest parse_tokenize_request(const nlohmann::json& body);
std::vector<int32_t> parse_detokenize_request(const nlohmann::json& body, int64_t vocab_size);
// The checked messages and template variables (tools, chat_template_kwargs).
ChatRequest parse_apply_template_request(const nlohmann::json& body, const nlohmann::ordered_json& ordered);

}  // namespace difftx::serve
