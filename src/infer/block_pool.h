// The bookkeeping of a pool of fixed-size blocks, by id alone (the storage is the owner's:
// kv_pool.h for keys and values): reference counts, the free list and the prefix cache. A block
// is held by the sequences whose tables list it; a full block of prompt tokens can be registered
// in the prefix cache, keyed by every token up to its end, for later requests with the same
// prefix to reuse. A block no sequence holds stays in the cache until it is needed, least
// recently used first; free blocks are handed out lowest id first.
#pragma once
#include <cstdint>
#include <list>
#include <queue>
#include <span>
#include <unordered_map>
#include <vector>

namespace difftx::infer {

class BlockPool {
 public:
  // blocks in [1, 2^31); block_tokens: the tokens a registered block holds.
  BlockPool(int64_t blocks, int64_t block_tokens);

  int64_t blocks() const { return blocks_; }
  int64_t block_tokens() const { return block_tokens_; }

  // A block for a sequence (reference count 1): a free one, else the least recently used cached
  // one (dropped from the cache); -1 when every block is held.
  int32_t allocate();
  // Drops one reference; at zero the block stays cached if registered, else it is free.
  void release(int32_t block);

  // The prefix cache. The key of a full block: its parent's key (0 for the first) and its tokens.
  static uint64_t chain_key(uint64_t parent, std::span<const int32_t> tokens);
  // The cached block with this key and these tokens after this parent block (a negative id for
  // the first block of a chain: the root, which names the chain's kind), with one more
  // reference; -1 when there is none.
  int32_t lookup(uint64_t key, int32_t parent, std::span<const int32_t> tokens);
  // Registers a full block that a sequence holds (once its contents are stored). A key already
  // registered keeps its block.
  void register_block(int32_t block, uint64_t key, int32_t parent, std::span<const int32_t> tokens);

  int64_t used() const { return used_; }      // blocks held by a sequence
  int64_t cached() const;                     // registered blocks (held or not)
  int64_t free_blocks() const { return blocks_ - used_; }  // allocatable (free or evictable)

 private:
  struct Entry {
    uint64_t key = 0;
    int32_t parent = -1;
    std::vector<int32_t> tokens;  // empty: not registered
  };
  void drop_from_cache(int32_t block);

  int64_t blocks_, block_tokens_;
  std::vector<int32_t> refs_;
  std::vector<Entry> entries_;
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> free_;  // unregistered, lowest first
  std::list<int32_t> evictable_;  // registered blocks with no reference, least recently used first
  std::vector<std::list<int32_t>::iterator> evictable_at_;
  std::unordered_multimap<uint64_t, int32_t> by_key_;
  int64_t used_ = 0;
};

}  // namespace difftx::infer
