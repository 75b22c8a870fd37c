#include "serve/responses_request.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "infer/engine.h"
#include "serve/api_error.h"
#include "serve/json_fields.h"
#include "serve/reasoning_envelope.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The Responses fields taken as the chat completion's, under the same names (the chat path
// accepts and ignores the harmless ones: user, store, metadata, ...), and those read here.
const std::set<std::string> kPassed = {"model", "temperature", "top_p", "top_k", "min_p", "seed",
                                       "repetition_penalty", "stream", "parallel_tool_calls",
                                       "chat_template_kwargs", "max_reasoning_tokens", "draft", "draft_tokens", "user",
                                       "metadata", "service_tier", "prompt_cache_key", "safety_identifier"};
const std::set<std::string> kRead = {"input", "instructions", "tools", "tool_choice", "text", "reasoning", "store",
                                     "max_output_tokens", "truncation", "include", "previous_response_id",
                                     "conversation", "background", "prompt", "max_tool_calls", "top_logprobs",
                                     "stream_options"};

// OpenAI's includables. Those but the logprobs and the reasoning's encrypted_content add what
// hosted tools and image inputs return, which a request here cannot have: nothing to add.
const std::set<std::string> kIncludable = {"message.output_text.logprobs", "reasoning.encrypted_content",
                                           "file_search_call.results",     "web_search_call.results",
                                           "web_search_call.action.sources", "message.input_image.image_url",
                                           "computer_call_output.output.image_url", "code_interpreter_call.outputs"};

std::string at(const char* list, size_t i) { return std::string(list) + "[" + std::to_string(i) + "]"; }

// A message's content: a string, or input_text / output_text parts as chat's text parts.
ordered_json message_content(const ordered_json& content, const std::string& where) {
  if (content.is_string()) return content;
  if (!content.is_array()) bad_param("input", where + "'s 'content' must be a string or a list of parts");
  ordered_json parts = ordered_json::array();
  for (size_t j = 0; j < content.size(); ++j) {
    const ordered_json& part = content[j];
    const std::string type = type_field(part);
    const std::string part_at = where + ".content[" + std::to_string(j) + "]";
    if (type == "input_text" || type == "output_text" || type == "text")
      parts.push_back({{"type", "text"}, {"text", required_string(part, "text", "input", part_at)}});
    else if (type == "refusal")
      parts.push_back({{"type", "text"}, {"text", required_string(part, "refusal", "input", part_at)}});
    else
      unsupported("input", part_at + " of type '" + type + "' (text only)");
  }
  return parts;
}

// The request's input as items: a string as one user message.
ordered_json input_items(const ordered_json& input) {
  if (input.is_string()) return ordered_json::array({{{"type", "message"}, {"role", "user"}, {"content", input}}});
  if (!input.is_array() || input.empty()) bad_param("input", "'input' must be a string or a non-empty list of items");
  return input;
}

// A reasoning item's text: what its encrypted_content seals (the whole reasoning, where a client
// that stores nothing sends it back), else its content's and summary's texts.
std::string reasoning_text(const ordered_json& item, const std::string& where) {
  if (const auto sealed = item.find("encrypted_content"); sealed != item.end() && !sealed->is_null()) {
    const std::optional<std::string> text =
        sealed->is_string() ? open_reasoning(sealed->get<std::string>()) : std::nullopt;
    if (!text)
      throw ApiError(400, where + "'s encrypted_content could not be verified: it is not one this server gave",
                     "input", "invalid_encrypted_content");
    return *text;
  }
  std::string text;
  for (const char* key : {"content", "summary"})
    if (item.contains(key) && item[key].is_array())
      for (const ordered_json& part : item[key])
        if (part.is_object() && part.contains("text") && part["text"].is_string()) {
          if (!text.empty()) text += "\n";
          text += part["text"].get<std::string>();
        }
  return text;
}

// `include`: a list of OpenAI's includables.
ResponseIncludes includes_of(const json* include) {
  ResponseIncludes out;
  if (!include || include->is_null()) return out;
  if (!include->is_array()) bad_param("include", "'include' must be a list of strings");
  for (size_t i = 0; i < include->size(); ++i) {
    const json& name = (*include)[i];
    if (!name.is_string() || !kIncludable.count(name.get<std::string>()))
      bad_param("include", at("include", i) + " must be one of OpenAI's includables (message.output_text.logprobs, "
                                              "reasoning.encrypted_content, ...)");
    out.logprobs |= name == "message.output_text.logprobs";
    out.encrypted_reasoning |= name == "reasoning.encrypted_content";
  }
  return out;
}

// The items as chat messages: messages as they are; a model's function calls as the tool_calls of
// its assistant turn (the assistant message just before them, as the model wrote its text and then
// its calls, or a turn of their own); each call's output as a tool message; a reasoning item as the
// reasoning_content of the assistant turn after it. Errors name item i as input[i - named_from]
// (the items before it are a stored conversation's, checked when it was stored).
ordered_json input_messages(const ordered_json& input, size_t named_from, const char* list = "input") {
  ordered_json messages = ordered_json::array();
  std::string reasoning;  // a reasoning item's text, for the assistant turn that follows it
  const auto assistant_turn = [&]() -> ordered_json& {
    if (messages.empty() || messages.back()["role"] != "assistant") {
      messages.push_back({{"role", "assistant"}, {"content", ""}});
      if (!reasoning.empty()) messages.back()["reasoning_content"] = reasoning;
      reasoning.clear();
    }
    if (!messages.back().contains("tool_calls")) messages.back()["tool_calls"] = ordered_json::array();
    return messages.back();
  };
  for (size_t i = 0; i < input.size(); ++i) {
    const ordered_json& item = input[i];
    const std::string where = at(list, i - std::min(i, named_from));
    if (!item.is_object()) bad_param("input", where + " must be an object");
    const std::string type = type_field(item, item.contains("role") ? "message" : "");
    if (type == "message") {
      const std::string role = required_string(item, "role", "input", where);
      if (role != "user" && role != "system" && role != "developer" && role != "assistant")
        bad_param("input", where + "'s role must be user, system, developer or assistant");
      if (!item.contains("content")) bad_param("input", where + " needs a 'content'");
      ordered_json message = {{"role", role}, {"content", message_content(item["content"], where)}};
      if (role == "assistant" && !reasoning.empty()) message["reasoning_content"] = reasoning;
      if (role == "assistant") reasoning.clear();
      messages.push_back(std::move(message));
    } else if (type == "function_call") {
      ordered_json call = {{"id", required_string(item, "call_id", "input", where)},
                           {"type", "function"},
                           {"function", {{"name", required_string(item, "name", "input", where)},
                                         {"arguments", required_string(item, "arguments", "input", where)}}}};
      assistant_turn()["tool_calls"].push_back(std::move(call));
    } else if (type == "function_call_output") {
      const auto output = item.find("output");
      if (output == item.end() || !(output->is_string() || output->is_array()))
        bad_param("input", where + " needs an 'output': a string or a list of parts");
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", required_string(item, "call_id", "input", where)},
                          {"content", message_content(*output, where)}});
    } else if (type == "reasoning") {
      const std::string text = reasoning_text(item, where);
      if (!reasoning.empty() && !text.empty()) reasoning += "\n";
      reasoning += text;
    } else {
      unsupported("input", where + " of type '" + type + "'");
    }
  }
  return messages;
}

// Function tools, flat as the Responses API writes them, as chat's {"type", "function": {...}}.
ordered_json chat_tools(const ordered_json& tools) {
  if (!tools.is_array()) bad_param("tools", "'tools' must be a list");
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const ordered_json& tool = tools[i];
    const std::string type = type_field(tool);
    if (type != "function") unsupported("tools", at("tools", i) + " of type '" + type + "' (functions only)");
    ordered_json function = ordered_json::object();
    for (const auto& [key, value] : tool.items())
      if (key != "type") function[key] = value;
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

ordered_json chat_tool_choice(const ordered_json& choice) {
  if (choice.is_string()) return choice;
  if (type_field(choice) == "function" && choice.contains("name"))
    return {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
  unsupported("tool_choice", "a 'tool_choice' other than none, auto, required or {\"type\": \"function\", \"name\"}");
}

// text.format as chat's response_format: text, json_object, or json_schema with its name,
// schema and strict flat beside the type.
ordered_json response_format(const ordered_json& text) {
  if (!text.is_object()) bad_param("text", "'text' must be an object");
  for (const auto& [key, value] : text.items())
    if (key != "format" && key != "verbosity")
      throw ApiError(400, "unrecognized field text." + key, "text", "unknown_parameter");
  const auto format = text.find("format");
  if (format == text.end() || format->is_null()) return {{"type", "text"}};
  const std::string type = type_field(*format);
  if (type == "text" || type == "json_object") return {{"type", type}};
  if (type != "json_schema") bad_param("text", "'text.format.type' must be text, json_object or json_schema");
  ordered_json schema = ordered_json::object();
  for (const auto& [key, value] : format->items())
    if (key != "type") schema[key] = value;
  return {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
}

}  // namespace

void check_input_items(const ordered_json& items, const std::string& param) {
  if (!items.is_array()) bad_param(param, "'" + param + "' must be a list of items");
  try {
    input_messages(items, 0, param.c_str());
  } catch (const ApiError& e) {
    throw ApiError(e.status, e.message, param, e.code);
  }
}

std::string responses_param(const std::string& chat_param) {
  if (chat_param == "messages" || chat_param == "prompt") return "input";
  if (chat_param == "max_completion_tokens" || chat_param == "max_tokens") return "max_output_tokens";
  if (chat_param == "response_format") return "text";
  if (chat_param == "reasoning_effort") return "reasoning";
  return chat_param;
}

std::optional<std::string> previous_response_id(const json& body) {
  return Fields(body).string("previous_response_id");
}

std::optional<std::string> conversation_id(const json& body) {
  const json* c = Fields(body).find("conversation");
  if (!c) return std::nullopt;
  if (c->is_string()) return c->get<std::string>();
  if (c->is_object() && c->size() == 1 && c->contains("id") && (*c)["id"].is_string()) return (*c)["id"].get<std::string>();
  bad_param("conversation", "'conversation' must be a conversation's id, or {\"id\": ID}");
}

ResponsesRequest parse_responses_request(const json& body, const ordered_json& ordered, const ServeLimits& limits,
                                         const ordered_json& history, bool stores) {
  const Fields f(body);
  for (const auto& [key, value] : body.items())
    if (!kPassed.count(key) && !kRead.count(key))
      unknown_param(key);
  if (f.find("prompt")) unsupported("prompt", "'prompt' (stored prompts)");
  const std::optional<std::string> conversation = conversation_id(body);
  if (conversation && f.find("previous_response_id"))
    bad_param("conversation", "'conversation' and 'previous_response_id' cannot both be given");
  const ResponseIncludes includes = includes_of(f.find("include"));
  const std::string truncation = f.string("truncation").value_or("disabled");
  if (truncation != "disabled" && truncation != "auto")
    bad_param("truncation", "'truncation' must be \"auto\" or \"disabled\"");
  // Counts calls of hosted tools, which a request here cannot have: nothing to cut.
  const auto max_tool_calls = f.integer("max_tool_calls", 1, INT32_MAX);
  const int64_t top_logprobs = f.integer("top_logprobs", 0, infer::kMaxTopLogprobs).value_or(0);
  const auto max_output = f.integer("max_output_tokens", 1, std::max<int64_t>(1, limits.context));
  if (!body.contains("input") || body["input"].is_null())
    missing_param("input");

  const bool store = f.boolean("store").value_or(true) && stores;
  const bool background = f.boolean("background").value_or(false);
  if (background && !store)
    bad_param("background", stores ? "'background': true needs 'store': true (its Response is read back from the store)"
                                   : "'background': true needs stored responses, which this server keeps none of "
                                     "(--responses-store-bytes 0)");

  ordered_json chat = ordered_json::object();
  for (const auto& [key, value] : ordered.items())
    if (kPassed.count(key)) chat[key] = value;
  ResponsesRequest out;
  out.items = history;
  for (const ordered_json& item : input_items(ordered["input"])) out.items.push_back(item);
  ordered_json messages = input_messages(out.items, history.size());
  if (const auto instructions = f.string("instructions"))
    messages.insert(messages.begin(), ordered_json{{"role", "system"}, {"content", *instructions}});
  chat["messages"] = std::move(messages);
  if (max_output) chat["max_completion_tokens"] = *max_output;
  if (ordered.contains("tools") && !ordered["tools"].is_null()) chat["tools"] = chat_tools(ordered["tools"]);
  if (ordered.contains("tool_choice") && !ordered["tool_choice"].is_null())
    chat["tool_choice"] = chat_tool_choice(ordered["tool_choice"]);
  if (ordered.contains("text") && !ordered["text"].is_null())
    chat["response_format"] = response_format(ordered["text"]);
  if (includes.logprobs) {  // alternatives only with the logprobs, as vLLM has it
    chat["logprobs"] = true;
    chat["top_logprobs"] = top_logprobs;
  }
  if (const json* r = f.find("reasoning")) {
    if (!r->is_object()) bad_param("reasoning", "'reasoning' must be an object");
    if (r->contains("effort") && !(*r)["effort"].is_null()) chat["reasoning_effort"] = (*r)["effort"];
  }

  try {
    out.chat = parse_chat_request(json(chat), chat, limits);
  } catch (const ApiError& e) {
    throw ApiError(e.status, e.message, responses_param(e.param), e.code);
  }
  const auto given = [&](const char* key, json fallback) {
    const json* v = f.find(key);
    return v ? *v : fallback;
  };
  // text.format: a json_schema flat, as the request wrote it; the other types by their type.
  const json format = chat.contains("response_format") && chat["response_format"]["type"] == "json_schema"
                          ? body["text"]["format"]
                          : json{{"type", chat.value("response_format", ordered_json{{"type", "text"}})["type"]}};
  const json effort = chat.contains("reasoning_effort") ? body["reasoning"]["effort"] : json(nullptr);
  out.settings = {{"instructions", given("instructions", nullptr)},
                  {"max_output_tokens", given("max_output_tokens", nullptr)},
                  {"metadata", given("metadata", json::object())},
                  {"parallel_tool_calls", given("parallel_tool_calls", true)},
                  {"reasoning", {{"effort", effort}, {"summary", nullptr}}},
                  {"previous_response_id", given("previous_response_id", nullptr)},
                  {"store", store},
                  {"temperature", out.chat.params.options.sampling.temperature},
                  {"text", {{"format", format}}},
                  {"tool_choice", given("tool_choice", "auto")},
                  {"tools", given("tools", json::array())},
                  {"top_p", out.chat.params.options.sampling.top_p},
                  {"top_logprobs", top_logprobs},
                  {"max_tool_calls", max_tool_calls ? json(*max_tool_calls) : json(nullptr)},
                  {"truncation", truncation},
                  {"background", background}};
  if (conversation) out.settings["conversation"] = {{"id", *conversation}};
  out.includes = includes;
  out.background = background;
  out.truncate_auto = truncation == "auto";
  return out;
}

}  // namespace difftx::serve
