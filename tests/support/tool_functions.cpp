#include "support/tool_functions.h"

namespace difftx::testing {

const std::vector<serve::ToolFunction>& weather_and_add() {
  using nlohmann::ordered_json;
  static const std::vector<serve::ToolFunction> functions = {
      {"get_weather", ordered_json::parse(R"({"type": "object", "properties": {"city": {"type": "string"}},
                                             "required": ["city"], "additionalProperties": false})")},
      {"add", ordered_json::parse(R"({"type": "object",
                                     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                     "required": ["a", "b"], "additionalProperties": false})")}};
  return functions;
}

Calls calls_of(const serve::ToolParse& parse) {
  Calls out;
  for (const serve::ToolCall& c : parse.calls) out.emplace_back(c.name, c.arguments);
  return out;
}

}  // namespace difftx::testing
