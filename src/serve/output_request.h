// What a request asks of the form of its output, checked like every other field (a bad value is
// a 400 naming it): response_format (json_object, json_schema), a GBNF `grammar`, tools with
// tool_choice and parallel_tool_calls, max_reasoning_tokens. Whether a schema or a tool's
// parameters can be enforced is decided where the grammar is built (output_constraint.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/tool_format.h"

namespace difftx::serve {

enum class ToolChoice { none, automatic, required };

struct OutputRequest {
  std::optional<nlohmann::ordered_json> schema;  // the document's JSON Schema (json_object: any object)
  std::optional<std::string> grammar;    // GBNF text
  std::vector<ToolFunction> functions;   // the tools' functions, in order
  nlohmann::ordered_json tools;          // the tools as given (null: none), for the chat template
  ToolChoice tool_choice = ToolChoice::automatic;
  std::optional<std::string> named_function;  // tool_choice naming one function (then required)
  bool parallel_tool_calls = true;
  std::optional<int64_t> max_reasoning_tokens;
  // Whether the reply's calls are parsed (tools given and tool_choice not none).
  bool parses_tool_calls() const { return !functions.empty() && tool_choice != ToolChoice::none; }
};

constexpr int64_t kMaxTools = 128;

// Reads response_format and grammar (completions and chat); `ordered` is the same body with its
// keys in the order written (a schema's properties are written in that order).
void parse_output_format(const nlohmann::json& body, const nlohmann::ordered_json& ordered, OutputRequest& out);
// Reads tools, tool_choice, parallel_tool_calls and max_reasoning_tokens (chat); `ordered` is
// the same body with its keys in the order written (the chat template prints tools with tojson).
void parse_tools(const nlohmann::json& body, const nlohmann::ordered_json& ordered, OutputRequest& out);
// An assistant message's tool_calls checked, each call's arguments (a JSON string) turned into
// the object chat templates expect (as vLLM passes them; none, null or "" is {}); a malformed call
// is a 400.
nlohmann::ordered_json checked_tool_calls(const nlohmann::ordered_json& calls);

}  // namespace difftx::serve
