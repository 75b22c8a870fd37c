// POST /v1/completions, /v1/chat/completions, /v1/responses and /v1/messages (chat completions
// answered as OpenAI's Responses API and Anthropic's Messages API answer): parse, tokenize, run the
// choices on the engine, answer with one response or an event stream. POST
// /v1/messages/count_tokens: the prompt's tokens.
#pragma once
#include <httplib.h>

#include "serve/server_state.h"

namespace difftx::serve {

void handle_completions(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_chat_completions(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_responses(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_messages(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_count_tokens(ServerState& state, const httplib::Request& req, httplib::Response& res);

}  // namespace difftx::serve
