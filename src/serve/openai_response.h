// OpenAI's response and stream chunk shapes for completions and chat completions, built from
// what the engine produced (token strings already decoded). Pure functions.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace difftx::serve {

struct TokenInfo {
  std::string token;  // the token's bytes (may be part of a UTF-8 character)
  std::optional<float> logprob;  // none: a prompt's first token (echo), with no alternatives either
  std::vector<std::pair<std::string, float>> top;  // alternatives, most likely first
  bool silent = false;  // the token wrote no text (a special token skip_special_tokens leaves out)
};

struct ToolCallResult {
  std::string id, name, arguments;  // arguments: JSON text
};

struct ChoiceResult {
  std::string text;
  std::string finish_reason;     // "stop", "length" or "tool_calls"
  std::vector<TokenInfo> tokens; // with logprobs only
  std::optional<std::string> reasoning;   // chat: message.reasoning_content, where a block was read
  std::vector<ToolCallResult> tool_calls; // chat: message.tool_calls
  nlohmann::json prompt_logprobs = nullptr;  // vLLM's, where the prompt was scored (prompt_scores.h); else null
  // vLLM's: the stop string, or the stop_token_ids id, that ended it; null for anything else (the
  // end of sequence, the length).
  nlohmann::json stop_reason = nullptr;
};

struct Usage {
  int64_t prompt_tokens = 0, completion_tokens = 0;
  int64_t cached_tokens = 0;  // of the prompt tokens, those the prefix cache held
};

// Identity of one response: "cmpl-..." / "chatcmpl-..." id, unix time, the model's name.
struct ResponseHeader {
  std::string id;
  int64_t created = 0;
  std::string model;
};

// OpenAI's usage: the token counts, and prompt_tokens_details.cached_tokens.
nlohmann::json usage_json(const Usage& usage);
// The characters a token adds to its choice's text, as OpenAI and vLLM count text_offset: its
// string's, none for a silent token (so that the offsets index into the text returned).
int64_t text_characters(const TokenInfo& token);
// The legacy completions logprobs: tokens, token_logprobs, top_logprobs, text_offset (character
// offsets from `offset`, where the choice's text starts, each token's text_characters on).
nlohmann::json completion_logprobs(const std::vector<TokenInfo>& tokens, int64_t offset);
// Chat logprobs: {"content": [{token, logprob, bytes, top_logprobs}], "refusal": null}.
nlohmann::json chat_logprobs(const std::vector<TokenInfo>& tokens);

nlohmann::json completion_response(const ResponseHeader& h, const std::vector<ChoiceResult>& choices,
                                   const Usage& usage, bool logprobs, const std::vector<int64_t>& text_offsets);
// A message's content is null where it has tool calls and no text. A scored prompt's
// prompt_logprobs go on the response (the choices share the prompt), as vLLM puts them.
nlohmann::json chat_response(const ResponseHeader& h, const std::vector<ChoiceResult>& choices, const Usage& usage,
                             bool logprobs);
// One tool call as a message or a stream delta shows it ({index, id, type, function}).
nlohmann::json tool_call_json(const ToolCallResult& call, int64_t index);

// Stream chunks. finish_reason empty: null. logprobs: null when not asked for. stop_reason: with a
// finish_reason, as ChoiceResult's.
nlohmann::json completion_chunk(const ResponseHeader& h, int64_t index, const std::string& text,
                                const std::string& finish_reason, const nlohmann::json& logprobs,
                                const nlohmann::json& stop_reason = nullptr);
nlohmann::json chat_chunk(const ResponseHeader& h, int64_t index, const nlohmann::json& delta,
                          const std::string& finish_reason, const nlohmann::json& logprobs,
                          const nlohmann::json& stop_reason = nullptr);
// The last chunk of stream_options.include_usage: empty choices and the usage.
nlohmann::json usage_chunk(const ResponseHeader& h, const char* object, const Usage& usage);

// The models as OpenAI's clients read them (object, created, owned_by) and Anthropic's (type,
// display_name, created_at; the page's has_more, first_id, last_id) alike.
nlohmann::json models_list(const std::string& model, int64_t created);

// Compact JSON whose strings' invalid UTF-8 (partial characters in token strings) becomes U+FFFD.
std::string dump_json(const nlohmann::json& value);
std::string dump_ordered_json(const nlohmann::ordered_json& value);  // the same, keys as written

}  // namespace difftx::serve
