#include "serve/conversations.h"

#include <algorithm>
#include <utility>

#include "serve/api_error.h"
#include "serve/item_pages.h"
#include "serve/json_fields.h"
#include "serve/request_parse.h"
#include "serve/responses_request.h"
#include "serve/route_util.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr size_t kMaxItemsAtOnce = 20;  // OpenAI's, per create and per add

ApiError not_found(const std::string& what, const std::string& id) {
  return ApiError(404, what + " with id '" + id + "' not found.", "", "not_found");
}

json conversation_object(const Conversation& c) {
  return {{"id", c.id}, {"object", "conversation"}, {"created_at", c.created_at}, {"metadata", c.metadata}};
}

// The body as an object (an empty body: {}), with no fields but `allowed`.
std::pair<json, ordered_json> body_of(const httplib::Request& req, std::initializer_list<const char*> allowed) {
  const std::string text = req.body.empty() ? "{}" : req.body;
  json body = parse_body(text);
  [[maybe_unused]] const Fields object_only(body);  // a body that is no object: every route's 400
  for (const auto& [key, value] : body.items())
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }))
      unknown_param(key);
  return {std::move(body), parse_ordered_body(text)};
}

// metadata: up to 16 string values, keys up to 64 characters and values up to 512, as OpenAI's.
json metadata_of(const json& body) {
  const json* m = Fields(body).find("metadata");
  if (!m) return json::object();
  if (!m->is_object() || m->size() > 16) bad_param("metadata", "'metadata' must be an object of at most 16 strings");
  for (const auto& [key, value] : m->items())
    if (key.size() > 64 || !value.is_string() || value.get<std::string>().size() > 512)
      bad_param("metadata", "'metadata." + key + "' must be a string of at most 512 characters, under a key of at most 64");
  return *m;
}

// A message's text content as parts (input_text, or output_text for an assistant's), the item typed.
ordered_json stored_item(ordered_json item) {
  if (type_field(item, item.contains("role") ? "message" : "") != "message") return item;
  item["type"] = "message";
  if (item["content"].is_string()) {
    const bool said = item["role"] == "assistant";
    ordered_json part = {{"type", said ? "output_text" : "input_text"}, {"text", item["content"]}};
    if (said) part["annotations"] = ordered_json::array();
    item["content"] = ordered_json::array({part});
  }
  if (!item.contains("status")) item["status"] = "completed";
  return item;
}

// The items of `field` (1-20, or 0-20 where they may be absent), checked and in their stored form.
std::vector<ordered_json> items_of(const ordered_json& body, const char* field, bool required) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) {
    if (required) missing_param(field);
    return {};
  }
  if (!it->is_array() || it->size() > kMaxItemsAtOnce || (required && it->empty()))
    bad_param(field, std::string("'") + field + "' must be a list of " + (required ? "1" : "0") + " to 20 items");
  check_input_items(*it, field);
  std::vector<ordered_json> items;
  for (const ordered_json& item : *it) items.push_back(stored_item(item));
  return items;
}

Conversation found(ServerState& state, const std::string& id) {
  auto c = state.conversations.get(id);
  if (!c) throw not_found("Conversation", id);
  return std::move(*c);
}

}  // namespace

ConversationTurn begin_turn(ServerState& state, const std::string& id) {
  std::shared_ptr<void> hold = state.conversations.hold(id);
  if (!hold)
    throw ApiError(400, "another response is running in conversation '" + id + "': retry once it has ended",
                   "conversation", "conversation_locked");
  return {found(state, id).items, std::move(hold)};  // read under the hold
}

void add_to_conversation(ServerState& state, const std::string& id, const std::vector<ordered_json>& input,
                         const json& response) {
  std::vector<ordered_json> items;
  for (const ordered_json& item : input) items.push_back(stored_item(item));
  for (const json& item : response["output"]) items.push_back(ordered_json(item));
  state.conversations.append(id, std::move(items));
}

void handle_conversation_create(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const auto [body, ordered] = body_of(req, {"items", "metadata"});
    json metadata = metadata_of(body);
    std::vector<ordered_json> items = items_of(ordered, "items", false);
    if (!state.conversations.enabled())
      throw ApiError(400, "this server keeps no conversations (--responses-store-bytes 0)", "", "conversations_disabled");
    send_json(res, conversation_object(state.conversations.create(std::move(metadata), std::move(items))));
  });
}

void handle_conversation_get(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] { send_json(res, conversation_object(found(state, req.matches[1]))); });
}

void handle_conversation_update(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const auto [body, ordered] = body_of(req, {"metadata"});
    if (!body.contains("metadata")) missing_param("metadata");
    const auto c = state.conversations.set_metadata(req.matches[1], metadata_of(body));
    if (!c) throw not_found("Conversation", req.matches[1]);
    send_json(res, conversation_object(*c));
  });
}

void handle_conversation_delete(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const std::string id = req.matches[1];
    if (!state.conversations.erase(id)) throw not_found("Conversation", id);
    send_json(res, {{"id", id}, {"object", "conversation.deleted"}, {"deleted", true}});
  });
}

void handle_conversation_items_add(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const auto [body, ordered] = body_of(req, {"items"});
    std::vector<ordered_json> items = items_of(ordered, "items", true);
    const auto added = state.conversations.append(req.matches[1], std::move(items));
    if (!added) throw not_found("Conversation", req.matches[1]);
    send_json(res, item_list(*added, false));
  });
}

void handle_conversation_items_list(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] { send_json(res, item_page(found(state, req.matches[1]).items, req)); });
}

void handle_conversation_item_get(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    const std::string item_id = req.matches[2];
    for (const ordered_json& item : found(state, req.matches[1]).items)
      if (item.value("id", "") == item_id) return send_json(res, item);
    throw not_found("Item", item_id);
  });
}

void handle_conversation_item_delete(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  answer(res, [&] {
    bool had = false;
    const auto c = state.conversations.erase_item(req.matches[1], req.matches[2], had);
    if (!c) throw not_found("Conversation", req.matches[1]);
    if (!had) throw not_found("Item", req.matches[2]);
    send_json(res, conversation_object(*c));
  });
}

}  // namespace difftx::serve
