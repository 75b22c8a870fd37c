// The responses a server keeps for OpenAI's `store` (serve/responses_request.h): each Response
// object, and the items its conversation holds so far (the input items before it, its own input,
// its output), which a later request continues through `previous_response_id`. In memory, within
// a budget of bytes, as their JSON text (what the budget counts is what they take): the oldest are
// dropped first, but never a pinned one (a background run's Response while it runs), and a response
// larger than the whole budget, or than what the pinned ones leave, is not kept (nor the one it replaces). Safe to share between the
// server's threads; a lookup copies the text under the lock and reads it back after.
#pragma once
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace difftx::serve {

struct StoredResponse {
  nlohmann::json response;        // the Response object as it was returned
  nlohmann::ordered_json items;   // the conversation's items up to and including its output
};

class ResponseStore {
 public:
  explicit ResponseStore(int64_t budget_bytes) : budget_(budget_bytes) {}
  bool enabled() const { return budget_ > 0; }
  void put(const std::string& id, const StoredResponse& entry, bool pinned = false);
  std::optional<StoredResponse> get(const std::string& id) const;
  bool erase(const std::string& id);  // whether it was there

 private:
  struct Kept {
    std::string response, items;  // JSON text
    std::list<std::string>::iterator age;
    bool pinned = false;
    int64_t bytes() const { return static_cast<int64_t>(response.size() + items.size()); }
  };
  void drop(std::unordered_map<std::string, Kept>::iterator it);

  const int64_t budget_;
  mutable std::mutex mutex_;
  std::list<std::string> oldest_first_;
  std::unordered_map<std::string, Kept> kept_;
  int64_t bytes_ = 0;
};

}  // namespace difftx::serve
