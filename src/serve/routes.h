// The routes besides generation: health, models, tokenize / detokenize / apply-template,
// metrics and the chat page.
#pragma once
#include <httplib.h>

#include "serve/server_state.h"

namespace difftx::serve {

void handle_health(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_models(ServerState& state, const httplib::Request& req, httplib::Response& res);
// GET /v1/models/{id}: the served model's entry, or 404 for another id.
void handle_model(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_tokenize(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_detokenize(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_apply_template(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_metrics(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_page(ServerState& state, const httplib::Request& req, httplib::Response& res);

}  // namespace difftx::serve
