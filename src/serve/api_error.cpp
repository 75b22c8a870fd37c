#include "serve/api_error.h"

namespace difftx::serve {

ApiError::ApiError(int status_, std::string message_, std::string param_, std::string code_)
    : Error(message_), status(status_), message(std::move(message_)), param(std::move(param_)), code(std::move(code_)) {}

void bad_param(const std::string& param, const std::string& message) {
  throw ApiError(400, message, param, "invalid_value");
}

void unsupported(const std::string& param, const std::string& what) {
  throw ApiError(400, what + " is not supported by this server", param, "unsupported_parameter");
}

void missing_param(const std::string& param) {
  throw ApiError(400, "'" + param + "' is required", param, "missing_required_parameter");
}

void unknown_param(const std::string& key) {
  throw ApiError(400, "unrecognized request argument supplied: " + key, key, "unknown_parameter");
}

const char* error_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

nlohmann::json error_body(int status, const std::string& message, const std::string& param, const std::string& code) {
  return {{"error",
           {{"message", message},
            {"type", error_type(status)},
            {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
            {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}}}};
}

nlohmann::json error_body(const ApiError& e) { return error_body(e.status, e.message, e.param, e.code); }

ErrorShape error_shape(const std::string& path) {
  return path == "/v1/messages" || path.rfind("/v1/messages/", 0) == 0 ? ErrorShape::anthropic : ErrorShape::openai;
}

nlohmann::json error_body(const ApiError& e, ErrorShape shape) {
  if (shape == ErrorShape::openai) return error_body(e);
  // Anthropic's types are OpenAI's but for the server's own failures.
  const char* type = e.status == 503 ? "overloaded_error" : e.status >= 500 ? "api_error" : error_type(e.status);
  return {{"type", "error"}, {"error", {{"type", type}, {"message", e.message}}}};
}

}  // namespace difftx::serve
