#include "serve/response_store.h"

namespace difftx::serve {

void ResponseStore::drop(std::unordered_map<std::string, Kept>::iterator it) {
  bytes_ -= it->second.bytes;
  oldest_first_.erase(it->second.age);
  kept_.erase(it);
}

void ResponseStore::put(const std::string& id, StoredResponse entry) {
  // What it holds, as text: the memory it takes, within a small factor.
  const auto bytes = static_cast<int64_t>(entry.response.dump().size() + entry.items.dump().size() + id.size());
  if (bytes > budget_) return;
  std::lock_guard lock(mutex_);
  if (const auto it = kept_.find(id); it != kept_.end()) drop(it);
  while (bytes_ + bytes > budget_) drop(kept_.find(oldest_first_.front()));
  oldest_first_.push_back(id);
  kept_.emplace(id, Kept{std::move(entry), bytes, std::prev(oldest_first_.end())});
  bytes_ += bytes;
}

std::optional<StoredResponse> ResponseStore::get(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return std::nullopt;
  return it->second.entry;
}

bool ResponseStore::erase(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return false;
  drop(it);
  return true;
}

}  // namespace difftx::serve
