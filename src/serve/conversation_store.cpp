#include "serve/conversation_store.h"

#include <algorithm>
#include <ctime>

#include "serve/api_error.h"
#include "serve/ids.h"
#include "serve/openai_response.h"
#include "serve/responses_output.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

int64_t text_bytes(const json& v) { return static_cast<int64_t>(dump_json(v).size()); }
int64_t text_bytes(const ordered_json& v) { return static_cast<int64_t>(dump_ordered_json(v).size()); }

int64_t bytes_of(const Conversation& c) {
  int64_t bytes = text_bytes(c.metadata);
  for (const ordered_json& item : c.items) bytes += text_bytes(item);
  return bytes;
}

// Ids for the items that have none.
void give_ids(std::vector<ordered_json>& items) {
  for (ordered_json& item : items)
    if (item.is_object() && !(item.contains("id") && item["id"].is_string())) item["id"] = unique_id(item_prefix(item));
}

}  // namespace

void ConversationStore::make_room(int64_t more) const {
  if (bytes_ + more > budget_)
    throw ApiError(503,
                   "the server's conversations are full (" + std::to_string(bytes_) + " of " + std::to_string(budget_) +
                       " bytes, --responses-store-bytes): delete conversations or items to make room",
                   "", "conversations_full");
}

std::shared_ptr<void> ConversationStore::hold(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (!held_.insert(id).second) return nullptr;
  return std::shared_ptr<void>(this, [this, id](void*) {
    std::lock_guard lock(mutex_);
    held_.erase(id);
  });
}

Conversation ConversationStore::create(json metadata, std::vector<ordered_json> items) {
  std::lock_guard lock(mutex_);
  Conversation c{unique_id("conv_"), static_cast<int64_t>(std::time(nullptr)), std::move(metadata), std::move(items)};
  give_ids(c.items);
  const int64_t bytes = bytes_of(c);
  make_room(bytes);
  kept_.emplace(c.id, Kept{c, bytes});
  bytes_ += bytes;
  return c;
}

std::optional<Conversation> ConversationStore::get(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return std::nullopt;
  return it->second.conversation;
}

std::optional<Conversation> ConversationStore::set_metadata(const std::string& id, json metadata) {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return std::nullopt;
  Kept& k = it->second;
  const int64_t change = text_bytes(metadata) - text_bytes(k.conversation.metadata);
  if (change > 0) make_room(change);
  k.conversation.metadata = std::move(metadata);
  k.bytes += change;
  bytes_ += change;
  return k.conversation;
}

bool ConversationStore::erase(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return false;
  bytes_ -= it->second.bytes;
  kept_.erase(it);
  return true;
}

std::optional<std::vector<ordered_json>> ConversationStore::append(const std::string& id,
                                                                   std::vector<ordered_json> items) {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return std::nullopt;
  give_ids(items);
  int64_t bytes = 0;
  for (const ordered_json& item : items) bytes += text_bytes(item);
  make_room(bytes);
  Kept& k = it->second;
  k.conversation.items.insert(k.conversation.items.end(), items.begin(), items.end());
  k.bytes += bytes;
  bytes_ += bytes;
  return items;
}

std::optional<Conversation> ConversationStore::erase_item(const std::string& id, const std::string& item_id,
                                                          bool& found) {
  std::lock_guard lock(mutex_);
  found = false;
  const auto it = kept_.find(id);
  if (it == kept_.end()) return std::nullopt;
  Kept& k = it->second;
  auto& items = k.conversation.items;
  const auto item = std::find_if(items.begin(), items.end(), [&](const ordered_json& i) { return i.value("id", "") == item_id; });
  if (item != items.end()) {
    const int64_t bytes = text_bytes(*item);
    items.erase(item);
    k.bytes -= bytes;
    bytes_ -= bytes;
    found = true;
  }
  return k.conversation;
}

}  // namespace difftx::serve
