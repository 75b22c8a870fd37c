// OpenAI's Responses API (POST /v1/responses) as a chat completion: the body's input items,
// instructions, function tools, tool_choice, text.format, max_output_tokens and reasoning become
// the chat request's messages and fields, which the chat path checks, renders through the template
// and runs. What a stateless server cannot do (stored responses and conversations, background
// runs, hosted tools, non-text input) is a 400 naming the field, as is any field it does not know.
#pragma once
#include <nlohmann/json.hpp>

#include "serve/request_parse.h"

namespace difftx::serve {

struct ResponsesRequest {
  ChatRequest chat;
  // The request's settings as a Response object repeats them: instructions, tools, tool_choice,
  // parallel_tool_calls, temperature, top_p, max_output_tokens, metadata, text, reasoning.
  nlohmann::json settings;
};

// Errors name the Responses field (input, max_output_tokens, text, tools), not the chat one.
ResponsesRequest parse_responses_request(const nlohmann::json& body, const nlohmann::ordered_json& ordered,
                                         const ServeLimits& limits);

}  // namespace difftx::serve
