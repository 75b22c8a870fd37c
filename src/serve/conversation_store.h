// OpenAI's conversations (the Conversations API, serve/conversations.h, and a Response's
// `conversation`): each a list of items with their ids, its metadata and its creation time, kept in
// memory within a budget of bytes (what the items' and metadata's JSON text takes). Unlike stored
// responses, which OpenAI itself lets expire and the server drops for room, a conversation is never
// dropped: a write that would not fit is refused (a 503 naming --responses-store-bytes) and what is
// kept stays. Safe to share between the server's threads.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace difftx::serve {

struct Conversation {
  std::string id;
  int64_t created_at = 0;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<nlohmann::ordered_json> items;  // oldest first, each with its "id"
};

class ConversationStore {
 public:
  explicit ConversationStore(int64_t budget_bytes) : budget_(budget_bytes) {}
  bool enabled() const { return budget_ > 0; }
  // A new conversation ("conv_..."), its items given ids where they have none.
  Conversation create(nlohmann::json metadata, std::vector<nlohmann::ordered_json> items);
  std::optional<Conversation> get(const std::string& id) const;
  std::optional<Conversation> set_metadata(const std::string& id, nlohmann::json metadata);
  bool erase(const std::string& id);
  // The items added at its end, given ids where they have none; nullopt: no such conversation.
  std::optional<std::vector<nlohmann::ordered_json>> append(const std::string& id,
                                                            std::vector<nlohmann::ordered_json> items);
  // A Response's hold on conversation `id` while it runs, released when the handle's last copy goes;
  // null where another Response holds it (OpenAI refuses a second one: conversation_locked).
  std::shared_ptr<void> hold(const std::string& id);
  // The conversation without the item; nullopt: no such conversation. `found`: whether it had it.
  std::optional<Conversation> erase_item(const std::string& id, const std::string& item_id, bool& found);

 private:
  struct Kept {
    Conversation conversation;
    int64_t bytes = 0;
  };
  // A 503 unless `more` bytes fit beside what is kept (under the lock).
  void make_room(int64_t more) const;

  const int64_t budget_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Kept> kept_;
  int64_t bytes_ = 0;
  std::unordered_set<std::string> held_;  // ids of the conversations a Response holds
};

}  // namespace difftx::serve
