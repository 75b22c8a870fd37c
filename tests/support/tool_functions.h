// The two functions the tool-call family tests write calls to: get_weather(city: string) and
// add(a: integer, b: integer), both required, nothing else allowed.
#pragma once
#include <vector>

#include "serve/tool_format.h"

namespace difftx::testing {

const std::vector<serve::ToolFunction>& weather_and_add();

}  // namespace difftx::testing
