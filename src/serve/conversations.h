// OpenAI's Conversations API over HTTP (serve/conversation_store.h): POST /v1/conversations (up to
// 20 items and metadata), GET, POST (its metadata) and DELETE /v1/conversations/{id}, and its items:
// POST /v1/conversations/{id}/items (up to 20 more), GET .../items (a page, serve/item_pages.h),
// GET and DELETE .../items/{item_id}. Items are checked as a Response's input is
// (responses_request.h), stored with ids, a message's text as content parts. A Response with a
// `conversation` starts from its items and adds its input and output to them (add_to_conversation).
// An unknown conversation or item is a 404.
#pragma once
#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/server_state.h"

namespace difftx::serve {

// A Response's turn in a conversation: the items it continues, and its hold on the conversation
// until the Response ends (its last copy released).
struct ConversationTurn {
  std::vector<nlohmann::ordered_json> items;
  std::shared_ptr<void> hold;
};
// The turn of a Response that continues conversation `id`: a 404 where there is none, OpenAI's 400
// conversation_locked while another Response in it runs.
ConversationTurn begin_turn(ServerState& state, const std::string& id);
// A finished Response's input items and output items, added to its conversation (gone: nothing).
void add_to_conversation(ServerState& state, const std::string& id, const std::vector<nlohmann::ordered_json>& input,
                         const nlohmann::json& response);

void handle_conversation_create(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_conversation_get(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_conversation_update(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_conversation_delete(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_conversation_items_add(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_conversation_items_list(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_conversation_item_get(ServerState& state, const httplib::Request& req, httplib::Response& res);
void handle_conversation_item_delete(ServerState& state, const httplib::Request& req, httplib::Response& res);

}  // namespace difftx::serve
