// What a request asks of the form of its output, checked like every other field (a bad value is
// a 400 naming it): response_format (json_object, json_schema), a GBNF `grammar`, tools with
// tool_choice and parallel_tool_calls, max_reasoning_tokens; and the same constraints as the peers
// spell them: llama.cpp's `json_schema`, vLLM's `structured_outputs` {json, regex, choice,
// grammar, json_object} and its older guided_json, guided_regex, guided_choice, guided_grammar.
// One constraint a request. Whether a schema, regex or tool's parameters can be enforced is decided
// where the grammar is built (output_constraint.h).
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
  std::optional<std::string> regex;      // a regular expression the whole output matches (regex.h's subset)
  std::optional<std::vector<std::string>> choice;  // the output is one of these texts
  std::string format_field = "response_format";    // the request field the constraint above came from
  std::vector<ToolFunction> functions;   // the tools' functions, in order
  nlohmann::ordered_json tools;          // the tools as given (null: none), for the chat template
  ToolChoice tool_choice = ToolChoice::automatic;
  std::optional<std::string> named_function;  // tool_choice naming one function (then required)
  bool parallel_tool_calls = true;
  std::optional<int64_t> max_reasoning_tokens;
  // Whether the reply's calls are parsed (tools given and tool_choice not none).
  bool parses_tool_calls() const { return !functions.empty() && tool_choice != ToolChoice::none; }
  // Whether the output's text is constrained (schema, grammar, regex or choice; tools aside).
  bool constrains_text() const { return schema || grammar || regex || choice; }
};

constexpr int64_t kMaxTools = 128;
constexpr int64_t kMaxChoices = 1024;

// The body fields parse_output_format reads, for the endpoints' lists of known fields.
inline constexpr const char* kOutputFormatFields[] = {"response_format", "grammar",      "json_schema",
                                                      "structured_outputs", "guided_json", "guided_regex",
                                                      "guided_choice",   "guided_grammar"};

// Reads the output constraint: response_format, grammar and the peers' fields (completions and
// chat); `ordered` is the same body with its keys in the order written (a schema's properties are
// written in that order). Two constraints in one request are a 400 naming both.
void parse_output_format(const nlohmann::json& body, const nlohmann::ordered_json& ordered, OutputRequest& out);
// Reads tools, tool_choice, parallel_tool_calls and max_reasoning_tokens (chat); `ordered` is
// the same body with its keys in the order written (the chat template prints tools with tojson).
void parse_tools(const nlohmann::json& body, const nlohmann::ordered_json& ordered, OutputRequest& out);
// An assistant message's tool_calls checked, each call's arguments (a JSON string) turned into
// the object chat templates expect (as vLLM passes them; none, null or "" is {}); a malformed call
// is a 400.
nlohmann::ordered_json checked_tool_calls(const nlohmann::ordered_json& calls);

}  // namespace difftx::serve
