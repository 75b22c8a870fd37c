// The two functions the tool-call family tests write calls to: get_weather(city: string) and
// add(a: integer, b: integer), both required, nothing else allowed; and a parse's calls as pairs.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "serve/tool_format.h"

namespace difftx::testing {

const std::vector<serve::ToolFunction>& weather_and_add();

// (name, arguments) of each call parsed, in order.
using Calls = std::vector<std::pair<std::string, std::string>>;
Calls calls_of(const serve::ToolParse& parse);

}  // namespace difftx::testing
