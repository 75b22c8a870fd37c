#include "serve/messages_request.h"

#include <set>
#include <string>

#include "infer/engine.h"
#include "serve/api_error.h"
#include "serve/json_fields.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The Messages fields taken as the chat completion's under the same names (top_k, and the
// extensions difftx's chat takes beside it), those read here, and those that change no output
// here (prompt caching is automatic; one server, one speed).
const std::set<std::string> kPassed = {"model", "temperature", "top_p", "top_k", "stream", "seed", "min_p",
                                       "repetition_penalty", "chat_template_kwargs", "draft", "draft_tokens"};
const std::set<std::string> kRead = {"messages", "system", "max_tokens", "stop_sequences", "tools", "tool_choice",
                                     "thinking", "output_config", "metadata", "container", "mcp_servers",
                                     "context_management"};
const std::set<std::string> kIgnored = {"service_tier", "cache_control", "inference_geo", "speed"};

std::string at(const std::string& where, const char* list, size_t i) {
  return where + "." + list + "[" + std::to_string(i) + "]";
}

// Text blocks (a tool result's content, the system prompt) as one text; a string as it is.
std::string block_text(const ordered_json& content, const std::string& where, const char* field) {
  if (content.is_string()) return content;
  if (!content.is_array()) bad_param(field, where + " must be a string or a list of text blocks");
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const ordered_json& block = content[i];
    const std::string type = type_field(block);
    if (type != "text") unsupported(field, at(where, "content", i) + " of type '" + type + "' (text only)");
    if (!text.empty()) text += "\n";
    text += required_string(block, "text", field, at(where, "content", i));
  }
  return text;
}

// A user turn: its text blocks as one user message, its tool_result blocks as tool messages, in
// the order they come.
void user_turn(const ordered_json& content, const std::string& where, ordered_json& messages) {
  if (content.is_string()) {
    messages.push_back({{"role", "user"}, {"content", content}});
    return;
  }
  ordered_json parts = ordered_json::array();
  const auto flush = [&] {
    if (!parts.empty()) messages.push_back({{"role", "user"}, {"content", parts}});
    parts = ordered_json::array();
  };
  for (size_t i = 0; i < content.size(); ++i) {
    const ordered_json& block = content[i];
    const std::string block_at = at(where, "content", i);
    const std::string type = type_field(block);
    if (type == "text") {
      parts.push_back({{"type", "text"}, {"text", required_string(block, "text", "messages", block_at)}});
    } else if (type == "tool_result") {
      flush();
      const auto result = block.find("content");
      std::string text =
          result == block.end() || result->is_null() ? "" : block_text(*result, block_at, "messages");
      if (const auto error = block.find("is_error"); error != block.end() && !error->is_null()) {
        if (!error->is_boolean()) bad_param("messages", block_at + ".is_error must be a boolean");
        if (error->get<bool>()) text = "Error: " + text;  // the template shows only the text
      }
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", required_string(block, "tool_use_id", "messages", block_at)},
                          {"content", text}});
    } else {
      unsupported("messages", block_at + " of type '" + type + "' in a user turn (text and tool_result only)");
    }
  }
  flush();
}

// An assistant turn: its text, its thinking as reasoning_content, its tool_use blocks as tool calls.
void assistant_turn(const ordered_json& content, const std::string& where, ordered_json& messages) {
  ordered_json message = {{"role", "assistant"}, {"content", ""}};
  if (content.is_string()) {
    message["content"] = content;
    messages.push_back(std::move(message));
    return;
  }
  std::string text, reasoning;
  ordered_json calls = ordered_json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const ordered_json& block = content[i];
    const std::string block_at = at(where, "content", i);
    const std::string type = type_field(block);
    if (type == "text") {
      text += required_string(block, "text", "messages", block_at);
    } else if (type == "thinking") {
      reasoning += required_string(block, "thinking", "messages", block_at);
    } else if (type == "redacted_thinking") {
      // Another model's encrypted thoughts: nothing a template can show.
    } else if (type == "tool_use") {
      const auto input = block.find("input");
      if (input == block.end() || !input->is_object()) bad_param("messages", block_at + " needs an object 'input'");
      calls.push_back({{"id", required_string(block, "id", "messages", block_at)},
                       {"type", "function"},
                       {"function",
                        {{"name", required_string(block, "name", "messages", block_at)},
                         {"arguments", input->dump()}}}});
    } else {
      unsupported("messages", block_at + " of type '" + type + "' in an assistant turn");
    }
  }
  message["content"] = text;
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  messages.push_back(std::move(message));
}

ordered_json chat_messages(const ordered_json& input) {
  if (!input.is_array() || input.empty()) bad_param("messages", "'messages' must be a non-empty list");
  ordered_json messages = ordered_json::array();
  for (size_t i = 0; i < input.size(); ++i) {
    const ordered_json& m = input[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) bad_param("messages", where + " must be an object");
    const std::string role = required_string(m, "role", "messages", where);
    const auto content = m.find("content");
    if (content == m.end() || !(content->is_string() || content->is_array()))
      bad_param("messages", where + " needs a 'content': a string or a list of blocks");
    const bool empty = content->is_string() ? content->get_ref<const std::string&>().empty() : content->empty();
    if (empty && !(role == "assistant" && i + 1 == input.size()))
      bad_param("messages", where + ": all messages must have non-empty content except for the optional final "
                                    "assistant message");
    if (role == "user") user_turn(*content, where, messages);
    else if (role == "assistant") assistant_turn(*content, where, messages);
    else bad_param("messages", where + "'s role must be user or assistant (the system prompt is 'system')");
  }
  return messages;
}

// Custom tools ({name, description, input_schema}) as chat's function tools.
ordered_json chat_tools(const ordered_json& tools) {
  if (!tools.is_array()) bad_param("tools", "'tools' must be a list");
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const ordered_json& tool = tools[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!tool.is_object()) bad_param("tools", where + " must be an object");
    const std::string type = type_field(tool, "custom");
    if (type != "custom") unsupported("tools", where + " of type '" + type + "' (custom tools only)");
    ordered_json function = {{"name", required_string(tool, "name", "tools", where)}};
    if (tool.contains("description")) function["description"] = tool["description"];
    if (!tool.contains("input_schema")) bad_param("tools", where + " needs an 'input_schema'");
    function["parameters"] = tool["input_schema"];
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// tool_choice as chat's: auto, any (required), a named tool, none; disable_parallel_tool_use as
// parallel_tool_calls false.
void chat_tool_choice(const ordered_json& choice, ordered_json& chat) {
  if (!choice.is_object()) bad_param("tool_choice", "'tool_choice' must be an object");
  const std::string type = type_field(choice);
  if (type == "auto" || type == "none") chat["tool_choice"] = type;
  else if (type == "any") chat["tool_choice"] = "required";
  else if (type == "tool")
    chat["tool_choice"] = {{"type", "function"},
                           {"function", {{"name", required_string(choice, "name", "tool_choice", "tool_choice")}}}};
  else bad_param("tool_choice", "'tool_choice.type' must be auto, any, tool or none");
  if (const auto d = choice.find("disable_parallel_tool_use"); d != choice.end() && !d->is_null()) {
    if (!d->is_boolean()) bad_param("tool_choice", "'tool_choice.disable_parallel_tool_use' must be a boolean");
    chat["parallel_tool_calls"] = !d->get<bool>();
  }
}

// A template variable, unless the request's chat_template_kwargs set it already (they win).
void template_variable(ordered_json& chat, const char* name, const ordered_json& value) {
  if (!chat.contains("chat_template_kwargs")) chat["chat_template_kwargs"] = ordered_json::object();
  ordered_json& vars = chat["chat_template_kwargs"];
  if (vars.is_object() && !vars.contains(name)) vars[name] = value;  // not an object: the chat path names it
}

// thinking: enabled with a budget (the template's enable_thinking, and the reasoning budget);
// adaptive or between tools (thinking where the template lets the model, with no budget); or
// disabled. The thoughts come back whole: a display that omits them is refused.
void chat_thinking(const ordered_json& thinking, ordered_json& chat) {
  if (!thinking.is_object()) bad_param("thinking", "'thinking' must be an object");
  const std::string type = type_field(thinking);
  if (type != "enabled" && type != "disabled" && type != "adaptive" && type != "between_tools")
    bad_param("thinking", "'thinking.type' must be enabled, adaptive, between_tools or disabled");
  if (thinking.contains("display") && thinking["display"] == "omitted")
    unsupported("thinking", "'thinking.display': \"omitted\"");
  template_variable(chat, "enable_thinking", type != "disabled");
  if (type != "enabled") return;
  const auto budget = json_integer(thinking.value("budget_tokens", json()), 1, INT32_MAX);
  if (!budget) bad_param("thinking", "'thinking.budget_tokens' must be a positive integer");
  chat["max_reasoning_tokens"] = *budget;
}

// output_config: format, a JSON schema the text follows (chat's response_format json_schema), and
// effort (the template's reasoning_effort).
void chat_output_config(const ordered_json& config, ordered_json& chat) {
  if (!config.is_object()) bad_param("output_config", "'output_config' must be an object");
  for (const auto& [key, value] : config.items())
    if (key != "format" && key != "effort")
      throw ApiError(400, "output_config." + key + ": Extra inputs are not permitted", "output_config",
                     "unknown_parameter");
  if (const auto format = config.find("format"); format != config.end() && !format->is_null()) {
    if (!format->is_object() || type_field(*format) != "json_schema" || !format->contains("schema"))
      bad_param("output_config", "'output_config.format' must be {\"type\": \"json_schema\", \"schema\": {...}}");
    const ordered_json schema = {{"name", "output"}, {"schema", (*format)["schema"]}, {"strict", true}};
    chat["response_format"] = {{"type", "json_schema"}, {"json_schema", schema}};
  }
  if (const auto effort = config.find("effort"); effort != config.end() && !effort->is_null()) {
    static const std::set<std::string> kEfforts = {"low", "medium", "high", "xhigh", "max"};
    if (!effort->is_string() || !kEfforts.count(effort->get<std::string>()))
      bad_param("output_config", "'output_config.effort' must be one of low, medium, high, xhigh, max");
    template_variable(chat, "reasoning_effort", *effort);
  }
}

// context_management: edits that clear old tool results or thinking (clear_tool_uses_*,
// clear_thinking_*, which Claude Code sends with every request) are taken and applied as none: the
// conversation goes to the template whole, which shows what it shows of past thinking. Other edits
// (compaction: a summary the model would write) are refused.
void check_context_management(const json& v) {
  const json* edits = v.is_object() ? Fields(v).find("edits") : nullptr;
  if (!v.is_object() || (edits && !edits->is_array()))
    bad_param("context_management", "'context_management' must be an object with a list of 'edits'");
  if (!edits) return;
  for (size_t i = 0; i < edits->size(); ++i) {
    const json& edit = (*edits)[i];
    const std::string where = "context_management.edits[" + std::to_string(i) + "]";
    if (!edit.is_object() || !edit.contains("type") || !edit["type"].is_string())
      bad_param("context_management", where + " must be an object with a 'type'");
    const std::string type = edit["type"];
    if (type.rfind("clear_tool_uses_", 0) != 0 && type.rfind("clear_thinking_", 0) != 0)
      unsupported("context_management", where + " of type '" + type + "'");
  }
}

// stop_sequences: non-empty strings, as many as the engine takes (Anthropic sets no count).
std::vector<std::string> stop_sequences(const json& v) {
  if (!v.is_array() || v.size() > static_cast<size_t>(infer::kMaxStopStrings))
    bad_param("stop_sequences", "'stop_sequences' must be a list of at most " + std::to_string(infer::kMaxStopStrings) +
                                    " strings");
  std::vector<std::string> stops;
  for (const json& s : v) {
    if (!s.is_string() || s.get<std::string>().empty())
      bad_param("stop_sequences", "'stop_sequences' must hold non-empty strings");
    stops.push_back(s);
  }
  return stops;
}

// The chat field each Messages field became, for errors the chat path raises.
std::string messages_param(const std::string& chat_param) {
  if (chat_param == "max_completion_tokens") return "max_tokens";
  if (chat_param == "max_reasoning_tokens") return "thinking";
  if (chat_param == "parallel_tool_calls") return "tool_choice";
  if (chat_param == "response_format") return "output_config";
  return chat_param;
}

}  // namespace

ChatRequest parse_messages_request(const json& body, const ordered_json& ordered, const ServeLimits& limits,
                                   bool counting) {
  const Fields f(body);
  for (const auto& [key, value] : body.items())
    if (!kPassed.count(key) && !kRead.count(key) && !kIgnored.count(key))
      throw ApiError(400, key + ": Extra inputs are not permitted", key, "unknown_parameter");
  for (const char* key : {"container", "mcp_servers"})
    if (f.find(key)) unsupported(key, std::string("'") + key + "'");
  if (const json* v = f.find("context_management")) check_context_management(*v);
  if (const json* v = f.find("metadata"); v && !v->is_object()) bad_param("metadata", "'metadata' must be an object");
  if (!body.contains("messages") || body["messages"].is_null())
    missing_param("messages");
  std::optional<int64_t> max_tokens;
  if (!counting) {
    if (!body.contains("max_tokens") || body["max_tokens"].is_null())
      missing_param("max_tokens");
    max_tokens = f.integer("max_tokens", 1, std::max<int64_t>(1, limits.context));
  }

  ordered_json chat = ordered_json::object();
  for (const auto& [key, value] : ordered.items())
    if (kPassed.count(key) && !(counting && key == "stream")) chat[key] = value;
  ordered_json messages = chat_messages(ordered["messages"]);
  // A final assistant turn of text is a prefill: the reply continues it, as Anthropic's does.
  const ordered_json& last = messages.back();
  if (last["role"] == "assistant" && !last.contains("tool_calls") && last["content"] != "") {
    chat["add_generation_prompt"] = false;
    chat["continue_final_message"] = true;
  }
  if (f.find("system"))
    messages.insert(messages.begin(), ordered_json{{"role", "system"},
                                                   {"content", block_text(ordered["system"], "system", "system")}});
  chat["messages"] = std::move(messages);
  if (max_tokens) chat["max_completion_tokens"] = *max_tokens;
  std::vector<std::string> stops;
  if (const json* v = f.find("stop_sequences")) stops = stop_sequences(*v);
  if (f.find("tools")) chat["tools"] = chat_tools(ordered["tools"]);
  if (f.find("tool_choice")) chat_tool_choice(ordered["tool_choice"], chat);
  if (f.find("thinking")) chat_thinking(ordered["thinking"], chat);
  if (f.find("output_config")) chat_output_config(ordered["output_config"], chat);
  try {
    ChatRequest r = parse_chat_request(json(chat), chat, limits);
    r.params.options.stop_strings = std::move(stops);
    return r;
  } catch (const ApiError& e) {
    throw ApiError(e.status, e.message, messages_param(e.param), e.code);
  }
}

}  // namespace difftx::serve
