// OpenAI's Responses API (POST /v1/responses) as a chat completion: the body's input items,
// instructions, function tools, tool_choice, text.format, max_output_tokens and reasoning become
// the chat request's messages and fields, which the chat path checks, renders through the template
// and runs. A request may continue a stored response (`previous_response_id`,
// serve/response_store.h): its conversation's items come before the request's input, and its
// instructions do not carry over; so may a conversation (`conversation`, serve/conversations.h),
// whose items come first the same way. What the server does not do (stored prompts,
// hosted tools, non-text input) is a 400 naming the field, as is any field it
// does not know. `include` takes OpenAI's includables: the output text's logprobs (with
// `top_logprobs` alternatives) and the reasoning's encrypted_content are given; the others name
// what hosted tools and image inputs return, which never occur here.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/request_parse.h"
#include "serve/responses_output.h"

namespace difftx::serve {

struct ResponsesRequest {
  ChatRequest chat;
  // The request's settings as a Response object repeats them: instructions, tools, tool_choice,
  // parallel_tool_calls, temperature, top_p, max_output_tokens, metadata, text, reasoning.
  nlohmann::json settings;
  // The conversation's items so far: the continued response's, then this request's input (a
  // string input as its user message), to which the output is added where the response is stored.
  nlohmann::ordered_json items;
  ResponseIncludes includes;
  // truncation "auto": where the conversation does not fit the context, its oldest turns go.
  bool truncate_auto = false;
  bool background = false;  // run apart from the request (serve/background_responses.h); stored
};

// Items as a request's input takes them (messages with text, function calls and their outputs,
// reasoning), checked as its input is: a 400 naming `param` (and item i as PARAM[i]) otherwise.
void check_input_items(const nlohmann::ordered_json& items, const std::string& param);

// The Responses field a chat or engine field came from (messages and prompt: input;
// max_completion_tokens and max_tokens: max_output_tokens; ...), for errors raised in their terms.
std::string responses_param(const std::string& chat_param);

// The body's previous_response_id, where it has one (a 400 for one that is not a string).
std::optional<std::string> previous_response_id(const nlohmann::json& body);
// The body's conversation (its id, or {"id": ID}), where it has one (a 400 for anything else).
std::optional<std::string> conversation_id(const nlohmann::json& body);

// Errors name the Responses field (input, max_output_tokens, text, tools), not the chat one.
// history: the items of the response or the conversation it continues (none: an empty list); stores: whether the
// server keeps responses, so that `store` (OpenAI's default true) is honoured.
ResponsesRequest parse_responses_request(const nlohmann::json& body, const nlohmann::ordered_json& ordered,
                                         const ServeLimits& limits, const nlohmann::ordered_json& history,
                                         bool stores);

}  // namespace difftx::serve
