// The Responses API's stored responses over HTTP (serve/response_store.h): a finished response kept
// where its request asked (`store`), and the routes that read them: GET /v1/responses/{id},
// DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items (a page of the items the
// response was given: its conversation before its output) and, for background responses
// (serve/background_responses.h), POST /v1/responses/{id}/cancel.
#pragma once
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "serve/openai_response.h"
#include "serve/server_state.h"

namespace difftx::serve {

// Keeps `response` under its id with its conversation: `items` (the conversation before it, each
// item without an id given one) and its output items; `running`: a background run's Response while it
// runs, which the store does not drop for room.
void keep_response(ServerState& state, const ResponseHeader& header, const nlohmann::ordered_json& items,
                   const nlohmann::json& response, bool running = false);
// The stored response `id`, or a 404 (never stored, deleted, or dropped for room), as vLLM answers
// retrievals and previous_response_id alike.
StoredResponse stored_response(ServerState& state, const std::string& id);

// The Response as it was returned, or as a background run has it so far (400 for an `include`,
// which no stored response keeps); with stream=true, a background response's events past
// `starting_after` (serve/background_responses.h; 400 for any other response).
void handle_response_get(ServerState& state, const httplib::Request& req, httplib::Response& res);
// POST /v1/responses/{id}/cancel: a background response stopped (idempotent: the Response as it
// ended); 400 for a response that did not run in the background.
void handle_response_cancel(ServerState& state, const httplib::Request& req, httplib::Response& res);
// A background response still going is cancelled first.
void handle_response_delete(ServerState& state, const httplib::Request& req, httplib::Response& res);
// Query: limit (1-100, default 20), order (asc | desc, the default: the last item first), after (an
// item's id: the page starts past it).
void handle_response_input_items(ServerState& state, const httplib::Request& req, httplib::Response& res);

}  // namespace difftx::serve
