#include "infer/block_pool.h"

#include <algorithm>

#include "core/error.h"
#include "core/hash.h"

namespace difftx::infer {
namespace {

int64_t checked_blocks(int64_t blocks, int64_t block_tokens) {
  DIFFTX_CHECK(blocks >= 1 && blocks < (int64_t{1} << 31), "block pool: ", blocks, " blocks must be in [1, 2^31)");
  DIFFTX_CHECK(block_tokens >= 1, "block pool: ", block_tokens, " tokens per block must be positive");
  return blocks;
}

}  // namespace

BlockPool::BlockPool(int64_t blocks, int64_t block_tokens)
    : blocks_(checked_blocks(blocks, block_tokens)),
      block_tokens_(block_tokens),
      refs_(blocks, 0),
      entries_(blocks),
      evictable_at_(blocks) {
  for (int32_t b = 0; b < blocks; ++b) free_.push(b);
}

int32_t BlockPool::allocate() {
  int32_t block = -1;
  if (!free_.empty()) {
    block = free_.top();
    free_.pop();
  } else if (!evictable_.empty()) {
    block = evictable_.front();
    drop_from_cache(block);
  } else {
    return -1;
  }
  refs_[block] = 1;
  ++used_;
  return block;
}

void BlockPool::release(int32_t block) {
  DIFFTX_CHECK(block >= 0 && block < blocks_ && refs_[block] > 0, "block pool: release of block ", block,
               " that is not held");
  if (--refs_[block] > 0) return;
  --used_;
  if (entries_[block].tokens.empty()) {
    free_.push(block);
  } else {
    evictable_.push_back(block);
    evictable_at_[block] = std::prev(evictable_.end());
  }
}

uint64_t BlockPool::chain_key(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = mix64(parent ^ 0x6b76706f6f6cull);
  for (int32_t t : tokens) h = mix64(h ^ static_cast<uint32_t>(t));
  return h;
}

int32_t BlockPool::lookup(uint64_t key, int32_t parent, std::span<const int32_t> tokens) {
  const auto [first, last] = by_key_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    const int32_t block = it->second;
    const Entry& e = entries_[block];
    if (e.parent != parent || !std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end())) continue;
    if (refs_[block]++ == 0) {  // back from the evictable list
      evictable_.erase(evictable_at_[block]);
      ++used_;
    }
    return block;
  }
  return -1;
}

void BlockPool::register_block(int32_t block, uint64_t key, int32_t parent, std::span<const int32_t> tokens) {
  DIFFTX_CHECK(block >= 0 && block < blocks_ && refs_[block] > 0, "block pool: register of block ", block,
               " that is not held");
  DIFFTX_CHECK(static_cast<int64_t>(tokens.size()) == block_tokens_, "block pool: only full blocks are cached");
  if (!entries_[block].tokens.empty()) return;
  const auto [first, last] = by_key_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    const Entry& e = entries_[it->second];
    if (e.parent == parent && std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end())) return;
  }
  entries_[block] = Entry{key, parent, std::vector<int32_t>(tokens.begin(), tokens.end())};
  by_key_.emplace(key, block);
}

void BlockPool::drop_from_cache(int32_t block) {
  evictable_.erase(evictable_at_[block]);
  Entry& e = entries_[block];
  const auto [first, last] = by_key_.equal_range(e.key);
  for (auto it = first; it != last; ++it)
    if (it->second == block) {
      by_key_.erase(it);
      break;
    }
  e = Entry{};
}

int64_t BlockPool::cached() const { return static_cast<int64_t>(by_key_.size()); }

}  // namespace difftx::infer
