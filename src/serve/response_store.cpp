#include "serve/response_store.h"

#include "serve/openai_response.h"

namespace difftx::serve {

void ResponseStore::drop(std::unordered_map<std::string, Kept>::iterator it) {
  bytes_ -= it->second.bytes();
  oldest_first_.erase(it->second.age);
  kept_.erase(it);
}

void ResponseStore::put(const std::string& id, const StoredResponse& entry, bool pinned) {
  // JSON text; a string that is no UTF-8 (none should be) has its bad bytes replaced, never a throw.
  Kept kept{dump_json(entry.response), dump_ordered_json(entry.items), {}, pinned};
  const int64_t bytes = kept.bytes();
  std::lock_guard lock(mutex_);
  if (const auto it = kept_.find(id); it != kept_.end()) drop(it);  // also where the new one is not kept
  if (bytes > budget_) return;
  for (auto age = oldest_first_.begin(); bytes_ + bytes > budget_;) {
    while (age != oldest_first_.end() && kept_.at(*age).pinned) ++age;
    if (age == oldest_first_.end()) return;  // the pinned ones leave no room
    drop(kept_.find(*age++));
  }
  oldest_first_.push_back(id);
  kept.age = std::prev(oldest_first_.end());
  kept_.emplace(id, std::move(kept));
  bytes_ += bytes;
}

std::optional<StoredResponse> ResponseStore::get(const std::string& id) const {
  std::string response, items;
  {
    std::lock_guard lock(mutex_);
    const auto it = kept_.find(id);
    if (it == kept_.end()) return std::nullopt;
    response = it->second.response;
    items = it->second.items;
  }
  return StoredResponse{nlohmann::json::parse(response), nlohmann::ordered_json::parse(items)};
}

bool ResponseStore::erase(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return false;
  drop(it);
  return true;
}

}  // namespace difftx::serve
