// Errors a client caused (or a state it must wait out), in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}} with an HTTP status, or on Anthropic's routes
// (/v1/messages) in its: {"type": "error", "error": {"type", "message"}}.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace difftx::serve {

struct ApiError : Error {
  ApiError(int status, std::string message, std::string param = "", std::string code = "");
  int status;           // 400, 401, 404, 405, 413, 503, ...
  std::string message;  // what() too, but whole: a NUL from the request does not end it
  std::string param;  // the request field at fault; empty: none
  std::string code;   // a machine-readable reason; empty: none
};

// A 400 naming the field.
[[noreturn]] void bad_param(const std::string& param, const std::string& message);
// A 400 for a field (or a value of it) this server does not do: "<what> is not supported by this server".
[[noreturn]] void unsupported(const std::string& param, const std::string& what);
// A 400 for a required field that is absent: "'<param>' is required".
[[noreturn]] void missing_param(const std::string& param);
// A 400 for a field no endpoint here knows, as OpenAI words it.
[[noreturn]] void unknown_param(const std::string& key);

// OpenAI's "type" for a status: invalid_request_error, authentication_error, not_found_error, ...
const char* error_type(int status);
nlohmann::json error_body(int status, const std::string& message, const std::string& param = "",
                          const std::string& code = "");
nlohmann::json error_body(const ApiError& e);

enum class ErrorShape { openai, anthropic };
ErrorShape error_shape(const std::string& path);  // anthropic under /v1/messages
nlohmann::json error_body(const ApiError& e, ErrorShape shape);

}  // namespace difftx::serve
