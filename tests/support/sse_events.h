// A stream of typed server-sent events (the Responses and the Messages APIs') read back: each
// event's data as JSON, the test failing where an `event:` line does not name its data's type.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace difftx::testing {

std::vector<nlohmann::json> sse_events(const std::string& sse);

}  // namespace difftx::testing
