// The KV-cache manager (infer/kv_cache_manager.h) on its own, over a BlockPool of a few blocks:
// allocation all or nothing and what fits, the prefix cache looked up in step across groups,
// sliding windows giving blocks back, recurrent state slots, shared groups, lookahead slots
// rolled back, and the errors for bad groups and commits.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "infer/kv_cache_manager.h"

namespace difftx::infer {
namespace {

constexpr int64_t P = 16;

std::vector<int32_t> tokens(int64_t n, int32_t first = 1) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::vector<int32_t> ids(std::span<const int32_t> table) { return {table.begin(), table.end()}; }

KvCacheGroup group(CacheKind kind, std::vector<int64_t> layers, int64_t window = 0, int32_t source = -1) {
  return {kind, std::move(layers), window, source};
}

TEST(KvCacheManager, OneFullGroupAllocatesAllOrNothingAndFits) {
  BlockPool pool(6, P);
  KvCacheManager kv({group(CacheKind::full, {0, 1})}, pool, 0, true);
  EXPECT_EQ(kv.prefix_cache(), PrefixCache::on);
  ASSERT_TRUE(kv.allocate_slots(1, 20));
  EXPECT_EQ(ids(kv.table(1, 0)), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(kv.fit(2, 100), 64);  // 4 blocks left
  EXPECT_FALSE(kv.allocate_slots(2, 65));
  EXPECT_EQ(kv.used_blocks(), 2);  // nothing taken by the refusal
  EXPECT_TRUE(kv.table(2, 0).empty());
  kv.commit(1, tokens(20), 20);
  EXPECT_EQ(kv.computed(1), 20);
  EXPECT_EQ(kv.fit(1, 100), 12 + 4 * P);  // the rest of block 1, then the free blocks
  ASSERT_TRUE(kv.allocate_slots(1, 12));  // within block 1: nothing new
  EXPECT_EQ(kv.used_blocks(), 2);
  kv.commit(1, tokens(20), 12);
  kv.free(1);
  kv.free(1);  // unknown now: ignored
  EXPECT_EQ(kv.used_blocks(), 0);
  EXPECT_EQ(kv.cached_blocks(), 1);  // the one full prompt block
  EXPECT_EQ(kv.computed(1), 0);
}

// A second sequence with the same prompt reuses its full blocks, leaving the last prompt token
// to compute; a third with another first block finds nothing.
TEST(KvCacheManager, PrefixReuseLeavesATokenToCompute) {
  BlockPool pool(8, P);
  KvCacheManager kv({group(CacheKind::full, {0})}, pool, 0, true);
  const std::vector<int32_t> prompt = tokens(48);
  ASSERT_TRUE(kv.allocate_slots(1, 48));
  kv.commit(1, prompt, 48);
  EXPECT_EQ(kv.cached_blocks(), 3);
  EXPECT_EQ(kv.reuse_prefix(2, prompt), 32);  // not the third block: its last token is needed
  EXPECT_EQ(ids(kv.table(2, 0)), (std::vector<int32_t>{0, 1}));
  std::vector<int32_t> other = prompt;
  other[0] = 99;
  EXPECT_EQ(kv.reuse_prefix(3, other), 0);
  EXPECT_THROW(kv.reuse_prefix(2, prompt), Error);  // it holds blocks already
  kv.free(1);
  kv.free(2);
  kv.free(3);
  EXPECT_EQ(kv.used_blocks(), 0);
}

// Two page groups draw from one pool, a block each per block of positions, and their prefix
// chains are their own: a hit needs both groups' blocks.
TEST(KvCacheManager, PageGroupsShareThePoolAndHitInStep) {
  BlockPool pool(10, P);
  KvCacheManager kv({group(CacheKind::full, {0, 2}), group(CacheKind::full, {1, 3})}, pool, 0, true);
  EXPECT_EQ(kv.fit(1, 1000), 5 * P);
  ASSERT_TRUE(kv.allocate_slots(1, 33));  // 3 blocks a group
  EXPECT_EQ(kv.used_blocks(), 6);
  EXPECT_EQ(kv.fit(2, 1000), 2 * P);
  const std::vector<int32_t> prompt = tokens(40);
  kv.commit(1, prompt, 33);
  EXPECT_EQ(kv.cached_blocks(), 4);  // 2 full prompt blocks in each group
  EXPECT_EQ(kv.reuse_prefix(2, prompt), 32);
  EXPECT_EQ(kv.table(2, 0)[0], kv.table(1, 0)[0]);
  EXPECT_EQ(kv.table(2, 1)[1], kv.table(1, 1)[1]);
  EXPECT_NE(kv.table(2, 0)[0], kv.table(2, 1)[0]);
  kv.free(1);
  kv.free(2);
  EXPECT_EQ(kv.used_blocks(), 0);
}

// A sliding window of 20 positions (the row itself and 19 before): after position p is computed,
// blocks wholly before p + 1 - 19 are given back (-1 in the table), the full group keeps all.
TEST(KvCacheManager, SlidingWindowGivesBackBlocksOutOfTheWindow) {
  BlockPool pool(16, P);
  KvCacheManager kv({group(CacheKind::full, {0}), group(CacheKind::sliding_window, {1}, 20)}, pool, 0, true);
  const std::vector<int32_t> prompt = tokens(100);
  ASSERT_TRUE(kv.allocate_slots(1, 40));
  kv.commit(1, prompt, 40);  // the next row (40) reads 21..40: block 0 is out
  EXPECT_EQ(ids(kv.table(1, 0)), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(ids(kv.table(1, 1)), (std::vector<int32_t>{-1, 4, 5}));
  EXPECT_EQ(kv.used_blocks(), 5);
  ASSERT_TRUE(kv.allocate_slots(1, 30));
  kv.commit(1, prompt, 30);  // 70 computed: the next row reads 51..70, blocks 0-2 are out
  EXPECT_EQ(ids(kv.table(1, 1)).size(), 5u);
  EXPECT_EQ(kv.table(1, 1)[2], -1);
  EXPECT_GE(kv.table(1, 1)[3], 0);
  EXPECT_EQ(kv.used_blocks(), 5 + 2);
  EXPECT_EQ(kv.cached_blocks(), 8);  // 4 full prompt blocks a group, given back or not
  // The given-back blocks stay cached: a sequence with the same prompt finds every group's
  // blocks, then gives back those out of its window at once.
  EXPECT_EQ(kv.reuse_prefix(2, prompt), 64);
  std::span<const int32_t> window = kv.table(2, 1);
  EXPECT_EQ(std::count(window.begin(), window.end(), -1), 2);  // the next row (64) reads 45..64
  EXPECT_EQ(window[3], kv.table(1, 1)[3]);
  kv.free(1);
  kv.free(2);
  EXPECT_EQ(kv.used_blocks(), 0);
}

// One state slot per sequence in each recurrent group, from a pool of its own: a sequence that
// cannot get one gets nothing; preemption (free) gives it back. No prefix cache with them.
TEST(KvCacheManager, RecurrentStateIsASlotPerSequence) {
  BlockPool pool(16, P);
  KvCacheManager kv({group(CacheKind::recurrent, {0, 2}), group(CacheKind::full, {1, 3})}, pool, 3, true);
  EXPECT_EQ(kv.prefix_cache(), PrefixCache::off_recurrent_state);
  EXPECT_STREQ(prefix_cache_name(kv.prefix_cache()), "off (recurrent state is not snapshotted at block boundaries)");
  for (KvCacheManager::SeqId id = 1; id <= 3; ++id) {
    ASSERT_TRUE(kv.allocate_slots(id, 10));
    EXPECT_EQ(kv.table(id, 0).size(), 1u);
  }
  EXPECT_EQ(kv.used_state_slots(), 3);
  EXPECT_EQ(kv.fit(4, 10), 0);
  EXPECT_FALSE(kv.allocate_slots(4, 10));
  EXPECT_EQ(kv.used_blocks(), 3);  // the refusal took no block either
  const std::vector<int32_t> prompt = tokens(40);
  kv.commit(1, prompt, 10);
  ASSERT_TRUE(kv.allocate_slots(1, 20));  // a running sequence keeps its slot
  EXPECT_EQ(kv.used_state_slots(), 3);
  kv.commit(1, prompt, 20);
  EXPECT_EQ(kv.cached_blocks(), 0);
  kv.free(2);  // preempted
  EXPECT_EQ(kv.fit(4, 10), 10);
  ASSERT_TRUE(kv.allocate_slots(4, 10));
  EXPECT_EQ(kv.reuse_prefix(5, prompt), 0);
  for (KvCacheManager::SeqId id : {1, 3, 4, 5}) kv.free(id);
  EXPECT_EQ(kv.used_state_slots(), 0);
  EXPECT_EQ(kv.used_blocks(), 0);
}

// A model of recurrent layers only holds no pages at all.
TEST(KvCacheManager, RecurrentOnlyHoldsNoBlocks) {
  BlockPool pool(1, P);
  KvCacheManager kv({group(CacheKind::recurrent, {0})}, pool, 1, true);
  EXPECT_EQ(kv.fit(1, 500), 500);
  ASSERT_TRUE(kv.allocate_slots(1, 500));
  kv.commit(1, tokens(500), 500);
  EXPECT_EQ(kv.used_blocks(), 0);
  EXPECT_EQ(kv.fit(2, 5), 0);
  kv.free(1);
}

// A shared group (YOCO's cross-decoder) reads its source's table and takes no block.
TEST(KvCacheManager, SharedGroupReadsItsSourcesPages) {
  BlockPool pool(8, P);
  KvCacheManager kv({group(CacheKind::sliding_window, {0}, 8), group(CacheKind::full, {1}),
                     group(CacheKind::shared, {2, 3}, 0, 1)},
                    pool, 0, true);
  ASSERT_TRUE(kv.allocate_slots(1, 40));
  EXPECT_EQ(kv.used_blocks(), 6);
  EXPECT_EQ(ids(kv.table(1, 2)), ids(kv.table(1, 1)));
  EXPECT_EQ(kv.fit(2, 1000), P);  // 2 blocks left: one per page group
  kv.free(1);
  EXPECT_EQ(kv.used_blocks(), 0);
}

// Speculative drafts: slots for K lookahead positions beyond the new one; commit keeps the
// accepted ones and rolls the rest back - the block table shrinks to the kept positions and the
// recurrent state is the one after the last kept position.
TEST(KvCacheManager, LookaheadSlotsRollBack) {
  BlockPool pool(8, P);
  KvCacheManager kv({group(CacheKind::full, {0}), group(CacheKind::recurrent, {1})}, pool, 8, true);
  const std::vector<int32_t> prompt = tokens(30);
  ASSERT_TRUE(kv.allocate_slots(1, 30));
  kv.commit(1, prompt, 30);
  const int32_t running = kv.table(1, 1)[0];
  // The pending token and 4 drafts: positions 30..34, a third block.
  ASSERT_TRUE(kv.allocate_slots(1, 1, 4));
  EXPECT_EQ(kv.table(1, 0).size(), 3u);
  const std::vector<int32_t> slots = ids(kv.table(1, 1));
  ASSERT_EQ(slots.size(), 5u);
  EXPECT_EQ(slots[0], running);
  EXPECT_EQ(kv.used_state_slots(), 5);
  EXPECT_THROW(kv.commit(1, prompt, 6), Error);  // more than was slotted
  kv.commit(1, prompt, 1);  // every draft rejected: 31 computed, block 2 given back
  EXPECT_EQ(kv.computed(1), 31);
  EXPECT_EQ(kv.table(1, 0).size(), 2u);
  EXPECT_EQ(kv.used_blocks(), 2);
  EXPECT_EQ(ids(kv.table(1, 1)), (std::vector<int32_t>{slots[1]}));  // the state after the new row
  EXPECT_EQ(kv.used_state_slots(), 1);
  // Drafts again: two of four accepted.
  ASSERT_TRUE(kv.allocate_slots(1, 1, 4));
  const std::vector<int32_t> again = ids(kv.table(1, 1));
  kv.commit(1, prompt, 3);
  EXPECT_EQ(kv.computed(1), 34);
  EXPECT_EQ(kv.table(1, 0).size(), 3u);
  EXPECT_EQ(ids(kv.table(1, 1)), (std::vector<int32_t>{again[3]}));
  // Every draft accepted: the running slot holds the state after the last row already.
  ASSERT_TRUE(kv.allocate_slots(1, 1, 2));
  const int32_t kept = kv.table(1, 1)[0];
  kv.commit(1, prompt, 3);
  EXPECT_EQ(ids(kv.table(1, 1)), (std::vector<int32_t>{kept}));
  EXPECT_EQ(kv.computed(1), 37);
  kv.free(1);
  EXPECT_EQ(kv.used_blocks(), 0);
  EXPECT_EQ(kv.used_state_slots(), 0);
}

// Prefix registration covers only kept prompt positions: lookahead rows over a prompt that are
// rolled back register nothing.
TEST(KvCacheManager, RollbackRegistersOnlyKeptPromptBlocks) {
  BlockPool pool(8, P);
  KvCacheManager kv({group(CacheKind::full, {0})}, pool, 0, true);
  const std::vector<int32_t> prompt = tokens(40);
  ASSERT_TRUE(kv.allocate_slots(1, 30, 10));
  kv.commit(1, prompt, 30);
  EXPECT_EQ(kv.cached_blocks(), 1);
  EXPECT_EQ(kv.table(1, 0).size(), 2u);
  EXPECT_EQ(kv.reuse_prefix(2, prompt), 16);
  kv.free(1);
  kv.free(2);
}

// With the prefix cache off, nothing is registered or found.
TEST(KvCacheManager, PrefixCacheOffByOption) {
  BlockPool pool(8, P);
  KvCacheManager kv({group(CacheKind::full, {0})}, pool, 0, false);
  EXPECT_EQ(kv.prefix_cache(), PrefixCache::off_by_option);
  const std::vector<int32_t> prompt = tokens(40);
  ASSERT_TRUE(kv.allocate_slots(1, 40));
  kv.commit(1, prompt, 40);
  EXPECT_EQ(kv.cached_blocks(), 0);
  EXPECT_EQ(kv.reuse_prefix(2, prompt), 0);
  kv.free(1);
  kv.free(2);
}

TEST(KvCacheManager, BadGroupsAreErrorsNamingTheGroup) {
  BlockPool pool(4, P);
  const auto message = [&](std::vector<KvCacheGroup> groups, int64_t state_slots) {
    try {
      KvCacheManager kv(std::move(groups), pool, state_slots, true);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({}, 0).find("layer groups"), std::string::npos);
  EXPECT_NE(message({group(CacheKind::sliding_window, {0}, 0)}, 0).find("group 0: a sliding window"),
            std::string::npos);
  EXPECT_NE(message({group(CacheKind::full, {0, 1}), group(CacheKind::full, {1})}, 0).find("group 1: layer 1"),
            std::string::npos);
  EXPECT_NE(message({group(CacheKind::recurrent, {0}), group(CacheKind::shared, {1}, 0, 0)}, 4)
                .find("group 1: shared reads group 0"),
            std::string::npos);
  EXPECT_NE(message({group(CacheKind::full, {0}), group(CacheKind::shared, {1}, 0, 5)}, 0).find("reads group 5"),
            std::string::npos);
  EXPECT_NE(message({group(CacheKind::recurrent, {0})}, 0).find("state slots"), std::string::npos);
  KvCacheManager kv({group(CacheKind::full, {0})}, pool, 0, true);
  EXPECT_THROW(kv.allocate_slots(1, 0), Error);
  EXPECT_THROW(kv.table(1, 1), Error);
}

}  // namespace
}  // namespace difftx::infer
