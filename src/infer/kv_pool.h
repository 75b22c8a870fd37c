// The paged KV cache: one pool of fixed-size blocks shared by every sequence of the engine.
// A block holds block_tokens positions of every layer, each layer's keys and values in the
// layout of decode_attention.h with capacity = block_tokens (so a sequence's blocks are the
// pages decode_attention reads). Blocks are reference-counted: a sequence holds the blocks of its
// block table, and full blocks of prompt tokens can be registered in the prefix cache, keyed by
// every token up to their end, for later requests with the same prefix to reuse. A block no
// sequence holds stays in the cache until it is needed, least recently used first.
//
// The storage is allocated without being written, so the memory a process touches follows the
// blocks used (lowest-numbered blocks are handed out first), not the pool's size.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <queue>
#include <span>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "kernels/attention/decode_attention.h"
#include "model/config.h"

namespace difftx {

class KvPool {
 public:
  // blocks >= 1; block_tokens a positive multiple of kKeyTile. The storage is on `backend`.
  KvPool(backends::Backend& backend, const ModelConfig& config, KvStorage storage, int64_t block_tokens,
         int64_t blocks);

  int64_t blocks() const { return blocks_; }
  int64_t block_tokens() const { return dims_.capacity; }
  const DecodeAttentionDims& dims() const { return dims_; }  // one block's layout
  int64_t layer_bytes() const { return layer_bytes_; }
  int64_t block_bytes() const { return layers_ * layer_bytes_; }
  static int64_t block_bytes(const ModelConfig& config, KvStorage storage, int64_t block_tokens);

  // The storage as the backend's paged ops read it: one layer's keys and values in block b at
  // keys(b, layer) (decode_attention.h's regions).
  backends::PagedKv paged() const {
    return {dims_, storage_.as<unsigned char>(), layers_, layer_bytes_, key_bytes_};
  }

  // A block for a sequence (reference count 1): a free one, else the least recently used cached
  // one (dropped from the cache); -1 when every block is held.
  int32_t allocate();
  // Drops one reference; at zero the block stays cached if registered, else it is free.
  void release(int32_t block);

  // The prefix cache. The key of a full block: its parent's key (0 for the first) and its tokens.
  static uint64_t chain_key(uint64_t parent, std::span<const int32_t> tokens);
  // The cached block with this key and these tokens after this parent block (-1 for the first),
  // with one more reference; -1 when there is none.
  int32_t lookup(uint64_t key, int32_t parent, std::span<const int32_t> tokens);
  // Registers a full block that a sequence holds (once its keys and values are stored). A key
  // already registered keeps its block.
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

  int64_t layers_, blocks_;
  DecodeAttentionDims dims_;
  int64_t key_bytes_, layer_bytes_;
  backends::DeviceBuffer storage_;
  std::vector<int32_t> refs_;
  std::vector<Entry> entries_;
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> free_;  // unregistered, lowest first
  std::list<int32_t> evictable_;  // registered blocks with no reference, least recently used first
  std::vector<std::list<int32_t>::iterator> evictable_at_;
  std::unordered_multimap<uint64_t, int32_t> by_key_;
  int64_t used_ = 0;
};

}  // namespace difftx
