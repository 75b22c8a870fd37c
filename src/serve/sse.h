// Server-sent events as OpenAI streams them: one `data: <json>` event per chunk, then [DONE].
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "serve/openai_response.h"

namespace difftx::serve {

inline std::string sse_event(const nlohmann::json& value) { return "data: " + dump_json(value) + "\n\n"; }
inline constexpr const char* kSseDone = "data: [DONE]\n\n";
// A comment line: clients ignore it; writing it finds out whether the client is still there.
inline constexpr const char* kSsePing = ": ping\n\n";

}  // namespace difftx::serve
