// The Conversations API's store (serve/conversation_store.h): items given ids, added, deleted;
// metadata replaced; a write past the budget refused whole, with nothing kept lost; one Response
// holding a conversation at a time.
#include <gtest/gtest.h>

#include "serve/api_error.h"
#include "serve/conversation_store.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json message(const std::string& text) { return {{"type", "message"}, {"role", "user"}, {"content", text}}; }

TEST(ConversationStore, ItemsAreKeptWithIdsAndChangedInPlace) {
  ConversationStore store(1 << 20);
  const Conversation c = store.create({{"topic", "sums"}}, {message("1+2?"), {{"type", "reasoning"}, {"id", "rs_mine"}}});
  EXPECT_EQ(c.id.rfind("conv_", 0), 0u);
  ASSERT_EQ(c.items.size(), 2u);
  EXPECT_EQ(c.items[0]["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(c.items[1]["id"], "rs_mine");  // an id given stays
  const auto added = store.append(c.id, {{{"type", "function_call"}, {"call_id", "c1"}, {"name", "add"}, {"arguments", "{}"}}});
  ASSERT_TRUE(added);
  EXPECT_EQ((*added)[0]["id"].get<std::string>().rfind("fc_", 0), 0u);
  EXPECT_EQ(store.get(c.id)->items.size(), 3u);
  EXPECT_FALSE(store.append("conv_nope", {message("x")}));
  bool had = false;
  auto after = store.erase_item(c.id, "rs_mine", had);
  ASSERT_TRUE(after);
  EXPECT_TRUE(had);
  EXPECT_EQ(after->items.size(), 2u);
  after = store.erase_item(c.id, "rs_mine", had);
  EXPECT_FALSE(had);
  EXPECT_EQ(store.set_metadata(c.id, {{"topic", "products"}})->metadata["topic"], "products");
  EXPECT_NE(store.create({}, {}).id, c.id);
  EXPECT_TRUE(store.erase(c.id));
  EXPECT_FALSE(store.get(c.id));
  EXPECT_FALSE(store.erase(c.id));
}

TEST(ConversationStore, AWritePastTheBudgetIsRefusedAndNothingIsLost) {
  ConversationStore store(300);
  const Conversation c = store.create({}, {message(std::string(100, 'a'))});
  try {
    store.append(c.id, {message(std::string(100, 'b')), message(std::string(100, 'c'))});
    ADD_FAILURE() << "past the budget";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 503);
    EXPECT_NE(std::string(e.what()).find("--responses-store-bytes"), std::string::npos);
  }
  EXPECT_EQ(store.get(c.id)->items.size(), 1u);  // neither of the two went in, the first stayed
  EXPECT_THROW(store.create({}, {message(std::string(250, 'd'))}), ApiError);
  EXPECT_TRUE(store.append(c.id, {message("fits")}));
  bool had = false;
  store.erase_item(c.id, store.get(c.id)->items[0]["id"], had);  // deleting makes room
  EXPECT_TRUE(store.append(c.id, {message(std::string(100, 'e'))}));
}

TEST(ConversationStore, OneResponseHoldsAConversationAtATime) {
  ConversationStore store(1 << 20);
  const Conversation a = store.create({}, {}), b = store.create({}, {});
  std::shared_ptr<void> held = store.hold(a.id);
  ASSERT_TRUE(held);
  EXPECT_FALSE(store.hold(a.id));  // a second Response in it is refused
  EXPECT_TRUE(store.hold(b.id));   // another conversation is not
  std::shared_ptr<void> copy = held;
  held.reset();
  EXPECT_FALSE(store.hold(a.id));  // a copy still holds it
  copy.reset();
  EXPECT_TRUE(store.hold(a.id));   // released with the last copy
}

}  // namespace
}  // namespace difftx::serve
