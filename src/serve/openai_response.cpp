#include "serve/openai_response.h"

#include <ctime>

#include "data/utf8.h"

namespace difftx::serve {

using nlohmann::json;

namespace {

json nullable(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// One choice: its index, what it holds under `key` (text, message or delta), its logprobs and
// finish reason, and where it has finished, vLLM's stop_reason.
json choice(int64_t index, const char* key, json value, json logprobs, const std::string& finish_reason,
            const json& stop_reason) {
  json c = {{"index", index}, {key, std::move(value)}, {"logprobs", std::move(logprobs)},
            {"finish_reason", nullable(finish_reason)}};
  if (!finish_reason.empty()) c["stop_reason"] = stop_reason;
  return c;
}

// A response or a chunk: the header's fields, the object type and the choices.
json response(const ResponseHeader& h, const char* object, json choices) {
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}, {"choices", std::move(choices)}};
}

json with_usage(json response, const Usage& usage) {
  response["usage"] = usage_json(usage);
  return response;
}

json bytes_of(const std::string& s) {
  json bytes = json::array();
  for (unsigned char c : s) bytes.push_back(static_cast<int>(c));
  return bytes;
}

}  // namespace

std::string dump_json(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }
std::string dump_ordered_json(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

int64_t text_characters(const TokenInfo& t) {
  return t.silent ? 0 : static_cast<int64_t>(data::utf8_characters(t.token));
}

json completion_logprobs(const std::vector<TokenInfo>& tokens, int64_t offset) {
  json out = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const TokenInfo& t : tokens) {
    out["tokens"].push_back(t.token);
    out["token_logprobs"].push_back(t.logprob ? json(*t.logprob) : json(nullptr));
    json top = t.logprob ? json::object() : json(nullptr);
    for (const auto& [token, logprob] : t.top)
      if (!top.contains(token)) top[token] = logprob;  // two ids may read the same: keep the likelier
    out["top_logprobs"].push_back(std::move(top));
    out["text_offset"].push_back(offset);
    offset += text_characters(t);
  }
  return out;
}

json chat_logprobs(const std::vector<TokenInfo>& tokens) {
  json content = json::array();
  for (const TokenInfo& t : tokens) {
    json top = json::array();
    for (const auto& [token, logprob] : t.top)
      top.push_back({{"token", token}, {"logprob", logprob}, {"bytes", bytes_of(token)}});
    content.push_back({{"token", t.token},
                       {"logprob", t.logprob ? json(*t.logprob) : json(nullptr)},
                       {"bytes", bytes_of(t.token)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}, {"refusal", nullptr}};
}

json completion_response(const ResponseHeader& h, const std::vector<ChoiceResult>& choices, const Usage& usage,
                         bool logprobs, const std::vector<int64_t>& text_offsets) {
  json list = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceResult& c = choices[i];
    list.push_back(choice(static_cast<int64_t>(i), "text", c.text,
                          logprobs ? completion_logprobs(c.tokens, text_offsets.at(i)) : json(nullptr),
                          c.finish_reason, c.stop_reason));
    if (!c.prompt_logprobs.is_null()) list.back()["prompt_logprobs"] = c.prompt_logprobs;
  }
  return with_usage(response(h, "text_completion", std::move(list)), usage);
}

json chat_response(const ResponseHeader& h, const std::vector<ChoiceResult>& choices, const Usage& usage,
                   bool logprobs) {
  json list = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceResult& c = choices[i];
    json message = {{"role", "assistant"},
                    {"content", c.tool_calls.empty() || !c.text.empty() ? json(c.text) : json(nullptr)},
                    {"refusal", nullptr}};
    if (c.reasoning) message["reasoning_content"] = *c.reasoning;
    if (!c.tool_calls.empty()) {
      message["tool_calls"] = json::array();
      for (size_t k = 0; k < c.tool_calls.size(); ++k) {
        json call = tool_call_json(c.tool_calls[k], static_cast<int64_t>(k));
        call.erase("index");
        message["tool_calls"].push_back(std::move(call));
      }
    }
    list.push_back(choice(static_cast<int64_t>(i), "message", std::move(message),
                          logprobs ? chat_logprobs(c.tokens) : json(nullptr), c.finish_reason, c.stop_reason));
  }
  json out = with_usage(response(h, "chat.completion", std::move(list)), usage);
  if (!choices.empty() && !choices[0].prompt_logprobs.is_null()) out["prompt_logprobs"] = choices[0].prompt_logprobs;
  return out;
}

json tool_call_json(const ToolCallResult& call, int64_t index) {
  return {{"index", index},
          {"id", call.id},
          {"type", "function"},
          {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

json completion_chunk(const ResponseHeader& h, int64_t index, const std::string& text, const std::string& finish_reason,
                      const json& logprobs, const json& stop_reason) {
  return response(h, "text_completion",
                  json::array({choice(index, "text", text, logprobs, finish_reason, stop_reason)}));
}

json chat_chunk(const ResponseHeader& h, int64_t index, const json& delta, const std::string& finish_reason,
                const json& logprobs, const json& stop_reason) {
  return response(h, "chat.completion.chunk",
                  json::array({choice(index, "delta", delta, logprobs, finish_reason, stop_reason)}));
}

json usage_chunk(const ResponseHeader& h, const char* object, const Usage& usage) {
  return with_usage(response(h, object, json::array()), usage);
}

json models_list(const std::string& model, int64_t created) {
  char when[32];  // Anthropic's created_at: RFC 3339, UTC
  const auto t = static_cast<std::time_t>(created);
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  const json entry = {{"id", model},         {"object", "model"},      {"created", created}, {"owned_by", "difftx"},
                      {"type", "model"},     {"display_name", model},  {"created_at", when}};
  return {{"object", "list"}, {"data", json::array({entry})}, {"has_more", false}, {"first_id", model},
          {"last_id", model}};
}

}  // namespace difftx::serve
