// Anthropic's Messages API (POST /v1/messages, and /v1/messages/count_tokens) as a chat
// completion: the system prompt, the messages' content blocks (text, tool_use and tool_result,
// thinking), the tools with their input_schema, tool_choice, thinking, output_config (a JSON
// schema for the text, the effort), max_tokens and stop_sequences become the chat request's
// messages and fields, which the chat path checks,
// renders through the template and runs. Blocks and tools the server cannot take (images,
// documents, server tools, MCP servers) are 400s naming the field, as is any field it does not know.
#pragma once
#include <nlohmann/json.hpp>

#include "serve/request_parse.h"

namespace difftx::serve {

// Errors name the Messages field (messages, system, max_tokens, stop_sequences, tools, thinking).
// counting: a count_tokens body, which has no max_tokens.
ChatRequest parse_messages_request(const nlohmann::json& body, const nlohmann::ordered_json& ordered,
                                   const ServeLimits& limits, bool counting = false);

}  // namespace difftx::serve
