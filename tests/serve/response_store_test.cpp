// The Responses API's stored responses (serve/response_store.h): kept, found, replaced, deleted;
// the oldest dropped first once the budget is spent, but never a pinned one (a background run's);
// one larger than the budget, or than what the pinned leave, not kept.
#include <gtest/gtest.h>

#include "serve/response_store.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A response whose stored text takes about `bytes`.
StoredResponse entry(const std::string& text, size_t bytes) {
  return {json{{"text", text}, {"pad", std::string(bytes, 'x')}}, ordered_json::array({text})};
}

TEST(ResponseStore, KeepsFindsReplacesAndDeletes) {
  ResponseStore store(1 << 20);
  EXPECT_TRUE(store.enabled());
  EXPECT_FALSE(store.get("resp_a"));
  store.put("resp_a", entry("a", 10));
  store.put("resp_b", entry("b", 10));
  ASSERT_TRUE(store.get("resp_a"));
  EXPECT_EQ(store.get("resp_a")->response["text"], "a");
  EXPECT_EQ(store.get("resp_b")->items, ordered_json::array({"b"}));
  store.put("resp_a", entry("a2", 10));
  EXPECT_EQ(store.get("resp_a")->response["text"], "a2");
  EXPECT_TRUE(store.erase("resp_a"));
  EXPECT_FALSE(store.erase("resp_a"));
  EXPECT_FALSE(store.get("resp_a"));
  EXPECT_TRUE(store.get("resp_b"));
  EXPECT_FALSE(ResponseStore(0).enabled());
}

TEST(ResponseStore, DropsTheOldestPastTheBudget) {
  ResponseStore store(10000);
  for (int i = 0; i < 5; ++i) store.put("resp_" + std::to_string(i), entry(std::to_string(i), 3000));
  // Three of about 3,050 bytes fit in 10,000: the last three.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(store.get("resp_" + std::to_string(i)).has_value(), i >= 2) << i;
  store.put("resp_big", entry("big", 20000));  // past the whole budget: not kept, nothing dropped
  EXPECT_FALSE(store.get("resp_big"));
  EXPECT_TRUE(store.get("resp_2"));
  // Replacing one frees its bytes: after it, room for one more without dropping resp_3.
  store.put("resp_2", entry("2", 100));
  store.put("resp_5", entry("5", 3000));
  EXPECT_TRUE(store.get("resp_3"));
  EXPECT_TRUE(store.get("resp_2"));
  EXPECT_TRUE(store.get("resp_5"));
}

TEST(ResponseStore, APinnedResponseIsNeverDroppedForRoom) {
  ResponseStore store(10000);
  store.put("resp_run", entry("running", 3000), /*pinned=*/true);
  for (int i = 0; i < 4; ++i) store.put("resp_" + std::to_string(i), entry(std::to_string(i), 3000));
  EXPECT_TRUE(store.get("resp_run"));  // the oldest, yet kept
  for (int i = 0; i < 4; ++i) EXPECT_EQ(store.get("resp_" + std::to_string(i)).has_value(), i >= 2) << i;
  store.put("resp_run", entry("ended", 3000));  // the run ended: an ordinary response from now on
  store.put("resp_4", entry("4", 3000));
  EXPECT_FALSE(store.get("resp_2"));
  EXPECT_TRUE(store.get("resp_run"));
  store.put("resp_5", entry("5", 3000));  // replaced, it was the newest: resp_3 goes first
  EXPECT_FALSE(store.get("resp_3"));
  store.put("resp_6", entry("6", 3000));
  EXPECT_FALSE(store.get("resp_run"));
  // Where the pinned ones leave no room, a new response is not kept, and they stay.
  ResponseStore tight(7000);
  tight.put("resp_a", entry("a", 3000), true);
  tight.put("resp_b", entry("b", 3000), true);
  tight.put("resp_c", entry("c", 3000));
  EXPECT_FALSE(tight.get("resp_c"));
  EXPECT_TRUE(tight.get("resp_a"));
  EXPECT_TRUE(tight.get("resp_b"));
}

}  // namespace
}  // namespace difftx::serve
