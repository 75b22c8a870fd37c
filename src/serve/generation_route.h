// POST /v1/completions, /v1/chat/completions and /v1/responses (a chat completion answered as
// OpenAI's Responses API answers): parse, tokenize, run the choices on the engine, answer with one
// response or an event stream.
#pragma once
#include <httplib.h>

#include "serve/server_state.h"

namespace difftx::serve {

void handle_completions(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_chat_completions(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_responses(ServerState& state, const httplib::Request& req, httplib::Response& res);

}  // namespace difftx::serve
