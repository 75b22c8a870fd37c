// Helpers every route uses: errors as OpenAI-shaped JSON responses, and the loaded model.
#pragma once
#include <httplib.h>

#include <exception>

#include "serve/api_error.h"
#include "serve/openai_response.h"
#include "serve/server_state.h"

namespace difftx::serve {

inline void send_json(httplib::Response& res, const nlohmann::json& body, int status = 200) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

inline void send_error(httplib::Response& res, const ApiError& e, ErrorShape shape = ErrorShape::openai) {
  if (e.status == 503) res.set_header("Retry-After", "1");
  send_json(res, error_body(e, shape), e.status);
}

// Runs a route's body; ApiError becomes its response, any other error a 500.
template <typename Body>
void answer(httplib::Response& res, Body&& body, ErrorShape shape = ErrorShape::openai) {
  try {
    body();
  } catch (const ApiError& e) {
    send_error(res, e, shape);
  } catch (const std::exception& e) {
    send_error(res, ApiError(500, std::string("internal error: ") + e.what(), "", "internal_error"), shape);
  }
}

// The model, or 503 while it loads.
inline ServedModel& require_model(ServerState& state) {
  if (!state.ready.load(std::memory_order_acquire))
    throw ApiError(503, "the model is still loading", "", "model_loading");
  return *state.model;
}

}  // namespace difftx::serve
