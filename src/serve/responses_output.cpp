#include "serve/responses_output.h"

#include "serve/json_fields.h"
#include "serve/reasoning_envelope.h"

namespace difftx::serve {
namespace {

using nlohmann::json;

// An output item's id: its place is its index in the output.
std::string item_id(const ResponseHeader& h, const char* prefix, size_t index) {
  return item_id(h, prefix, std::to_string(index));
}

// A reasoning item; `sealed`: its text as encrypted_content too, where the request included it.
json reasoning_item(const std::string& id, const std::string& text, bool sealed) {
  json content = json::array();
  if (!text.empty()) content.push_back({{"type", "reasoning_text"}, {"text", text}});
  json item = {{"id", id}, {"type", "reasoning"}, {"summary", json::array()}, {"content", content}};
  if (sealed) item["encrypted_content"] = seal_reasoning(text);
  return item;
}

json text_part(const std::string& text, json logprobs = json::array()) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}, {"logprobs", std::move(logprobs)}};
}

// The Responses API's logprobs of tokens: chat's, {token, logprob, bytes, top_logprobs} each.
json text_logprobs(const std::vector<TokenInfo>& tokens) { return chat_logprobs(tokens)["content"]; }

json message_item(const std::string& id, const char* status, json content) {
  return {{"id", id}, {"type", "message"}, {"status", status}, {"role", "assistant"}, {"content", std::move(content)}};
}

json call_item(const std::string& id, const std::string& call_id, const std::string& name,
               const std::string& arguments, const char* status) {
  return {{"id", id},         {"type", "function_call"}, {"status", status},
          {"call_id", call_id}, {"name", name},          {"arguments", arguments}};
}

}  // namespace

std::string item_id(const ResponseHeader& h, const char* prefix, const std::string& place) {
  const std::string base = h.id.rfind("resp_", 0) == 0 ? h.id.substr(5) : h.id;
  return prefix + base + "_" + place;
}

const char* item_prefix(const nlohmann::ordered_json& item) {
  const std::string type = type_field(item, "message");
  if (type == "function_call") return "fc_";
  if (type == "function_call_output") return "fco_";
  if (type == "reasoning") return "rs_";
  return "msg_";
}

json response_object(const ResponseHeader& h, const json& settings, const std::string& status,
                     json output, const Usage* usage) {
  json r = {{"id", h.id},
            {"object", "response"},
            {"created_at", h.created},
            {"status", status},
            {"model", h.model},
            {"output", std::move(output)},
            {"error", nullptr},
            {"incomplete_details", status == "incomplete" ? json{{"reason", "max_output_tokens"}} : json(nullptr)},
            {"previous_response_id", nullptr},
            {"usage", nullptr}};
  for (const auto& [key, value] : settings.items()) r[key] = value;
  if (usage)
    r["usage"] = {{"input_tokens", usage->prompt_tokens},
                  {"input_tokens_details", {{"cached_tokens", usage->cached_tokens}}},
                  {"output_tokens", usage->completion_tokens},
                  {"output_tokens_details", {{"reasoning_tokens", 0}}},
                  {"total_tokens", usage->prompt_tokens + usage->completion_tokens}};
  return r;
}

json output_items(const ResponseHeader& h, const ChoiceResult& c, bool cut, ResponseIncludes includes) {
  json items = json::array();
  const bool reasoned = c.reasoning && !c.reasoning->empty();
  if (reasoned)
    items.push_back(reasoning_item(item_id(h, "rs_", items.size()), *c.reasoning, includes.encrypted_reasoning));
  if (!c.text.empty() || (!reasoned && c.tool_calls.empty())) {  // an empty reply: one empty message
    json logprobs = includes.logprobs ? text_logprobs(c.tokens) : json::array();
    items.push_back(message_item(item_id(h, "msg_", items.size()), cut ? "incomplete" : "completed",
                                 json::array({text_part(c.text, std::move(logprobs))})));
  }
  for (const ToolCallResult& call : c.tool_calls)
    items.push_back(call_item(item_id(h, "fc_", items.size()), call.id, call.name, call.arguments, "completed"));
  return items;
}

ResponseEvents::ResponseEvents(ResponseHeader header, json settings, ResponseIncludes includes)
    : header_(std::move(header)), settings_(std::move(settings)), includes_(includes) {}

std::string ResponseEvents::event(json value) {
  value["sequence_number"] = sequence_++;
  return "event: " + value["type"].get<std::string>() + "\ndata: " + dump_json(value) + "\n\n";
}

std::string ResponseEvents::start() {
  const json r = response_object(header_, settings_, "in_progress", json::array(), nullptr);
  const bool background = settings_.value("background", false);
  const json queued = response_object(header_, settings_, "queued", json::array(), nullptr);
  std::string out = event({{"type", "response.created"}, {"response", background ? queued : r}});  // in order:
  if (background) out += event({{"type", "response.queued"}, {"response", queued}});       // each takes the next
  return out + event({{"type", "response.in_progress"}, {"response", r}});                  // sequence number
}

json ResponseEvents::ended_response(const std::string& status) {
  std::string unsent;  // the open item's closing events: the stream has ended without them
  close_open(unsent, true);
  return response_object(header_, settings_, status, items_, nullptr);
}

size_t ResponseEvents::open(std::string& out, const std::string& type, const std::string& call_id,
                            const std::string& name) {
  if (open_ && items_[*open_]["type"] == type && type != "function_call") return *open_;
  close_open(out, false);
  const size_t index = items_.size();
  json item;
  if (type == "reasoning") item = reasoning_item(item_id(header_, "rs_", index), "", false);
  else if (type == "message") item = message_item(item_id(header_, "msg_", index), "in_progress", json::array());
  else item = call_item(item_id(header_, "fc_", index), call_id, name, "", "in_progress");
  items_.push_back(item);
  texts_.emplace_back();
  logprobs_.push_back(json::array());
  open_ = index;
  out += event({{"type", "response.output_item.added"}, {"output_index", index}, {"item", item}});
  if (type != "function_call") {
    const json part = type == "message" ? text_part("") : json{{"type", "reasoning_text"}, {"text", ""}};
    out += event({{"type", "response.content_part.added"}, {"item_id", item["id"]}, {"output_index", index},
                  {"content_index", 0}, {"part", part}});
  }
  return index;
}

std::string ResponseEvents::push(const ReplyDelta& delta, const std::vector<std::string>& call_ids,
                                 const std::vector<TokenInfo>& content_tokens) {
  std::string out;
  const auto text_delta = [&](const std::string& type, const std::string& text, const char* event_type) {
    if (text.empty()) return;
    const size_t index = open(out, type);
    texts_[index] += text;
    json e = {{"type", event_type}, {"item_id", items_[index]["id"]}, {"output_index", index}, {"content_index", 0},
              {"delta", text}};
    if (type == "message") {
      e["logprobs"] = includes_.logprobs ? text_logprobs(content_tokens) : json::array();
      for (const json& l : e["logprobs"]) logprobs_[index].push_back(l);
    }
    out += event(std::move(e));
  };
  text_delta("reasoning", delta.reasoning, "response.reasoning_text.delta");
  text_delta("message", delta.content, "response.output_text.delta");
  for (size_t k = 0; k < delta.calls.size(); ++k) {
    const ToolCallDelta& d = delta.calls[k];
    if (!d.name.empty()) call_items_.push_back(open(out, "function_call", call_ids.at(k), d.name));
    if (d.index >= call_items_.size() || d.arguments.empty()) continue;
    const size_t index = call_items_[d.index];
    texts_[index] += d.arguments;
    out += event({{"type", "response.function_call_arguments.delta"}, {"item_id", items_[index]["id"]},
                  {"output_index", index}, {"delta", d.arguments}});
  }
  return out;
}

void ResponseEvents::close_open(std::string& out, bool cut) {
  if (!open_) return;
  const size_t index = *open_;
  open_.reset();
  json& item = items_[index];
  const std::string& text = texts_[index];
  const json common = {{"item_id", item["id"]}, {"output_index", index}};
  if (item["type"] == "function_call") {
    item["arguments"] = text;
    item["status"] = "completed";
    json done = common;
    done["type"] = "response.function_call_arguments.done";
    done["arguments"] = text;
    out += event(std::move(done));
  } else {
    const bool message = item["type"] == "message";
    const json part = message ? text_part(text, logprobs_[index]) : json{{"type", "reasoning_text"}, {"text", text}};
    json done = common;
    done["type"] = message ? "response.output_text.done" : "response.reasoning_text.done";
    done["content_index"] = 0;
    done["text"] = text;
    if (message) done["logprobs"] = logprobs_[index];
    out += event(std::move(done));
    json part_done = common;
    part_done["type"] = "response.content_part.done";
    part_done["content_index"] = 0;
    part_done["part"] = part;
    out += event(std::move(part_done));
    item = message ? message_item(item["id"], cut ? "incomplete" : "completed", json::array({part}))
                   : reasoning_item(item["id"], text, includes_.encrypted_reasoning);
  }
  out += event({{"type", "response.output_item.done"}, {"output_index", index}, {"item", item}});
}

std::string ResponseEvents::finish(bool cut, const Usage& usage) {
  std::string out;
  if (items_.empty()) open(out, "message");  // an empty reply: one empty message, as whole
  close_open(out, cut);
  const char* status = cut ? "incomplete" : "completed";
  response_ = response_object(header_, settings_, status, items_, &usage);
  return out + event({{"type", cut ? "response.incomplete" : "response.completed"}, {"response", response_}});
}

std::string ResponseEvents::error(const json& error_body) {
  json e = error_body.value("error", json::object());
  e["type"] = "error";
  return event(std::move(e));
}

}  // namespace difftx::serve
