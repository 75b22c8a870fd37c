#include "infer/kv_pool.h"

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "core/hash.h"

namespace difftx {
namespace {

DecodeAttentionDims block_dims(const ModelConfig& config, KvStorage storage, int64_t block_tokens) {
  DIFFTX_CHECK(block_tokens >= kKeyTile && block_tokens % kKeyTile == 0 && block_tokens <= (1 << 16),
               "KV block of ", block_tokens, " tokens: must be a multiple of ", kKeyTile, " in [", kKeyTile,
               ", 65536]");
  return DecodeAttentionDims{config.attention_variant(), block_tokens, storage};
}

}  // namespace

int64_t KvPool::block_bytes(const ModelConfig& config, KvStorage storage, int64_t block_tokens) {
  const DecodeAttentionDims d = block_dims(config, storage, block_tokens);
  return config.num_hidden_layers * (key_region_bytes(d) + value_region_bytes(d));
}

KvPool::KvPool(backends::Backend& backend, const ModelConfig& config, KvStorage storage, int64_t block_tokens,
               int64_t blocks)
    : layers_(config.num_hidden_layers),
      blocks_(blocks),
      dims_(block_dims(config, storage, block_tokens)),
      key_bytes_(key_region_bytes(dims_)),
      layer_bytes_(key_bytes_ + value_region_bytes(dims_)),
      refs_(blocks > 0 ? blocks : 0, 0),
      entries_(blocks > 0 ? blocks : 0),
      evictable_at_(blocks > 0 ? blocks : 0) {
  DIFFTX_CHECK(blocks >= 1 && blocks < (int64_t{1} << 31), "KV pool: ", blocks, " blocks must be in [1, 2^31)");
  const auto bytes = product_at_most({blocks, layers_, layer_bytes_}, int64_t{1} << 46);
  DIFFTX_CHECK(bytes.has_value(), "KV pool: ", blocks, " blocks of ", block_bytes(), " bytes exceed 64 TiB");
  // Not zeroed: on the CPU a page of the pool becomes resident when a block on it is first written.
  try {
    storage_ = backend.allocate(*bytes, false);
  } catch (const Error& e) {
    fail("KV pool: ", e.what(), " (", blocks, " blocks of ", block_tokens,
         " tokens); ask for fewer with --kv-tokens or --kv-bytes");
  }
  for (int32_t b = 0; b < blocks; ++b) free_.push(b);
}

int32_t KvPool::allocate() {
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

void KvPool::release(int32_t block) {
  DIFFTX_CHECK(block >= 0 && block < blocks_ && refs_[block] > 0, "KV pool: release of block ", block,
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

uint64_t KvPool::chain_key(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = mix64(parent ^ 0x6b76706f6f6cull);
  for (int32_t t : tokens) h = mix64(h ^ static_cast<uint32_t>(t));
  return h;
}

int32_t KvPool::lookup(uint64_t key, int32_t parent, std::span<const int32_t> tokens) {
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

void KvPool::register_block(int32_t block, uint64_t key, int32_t parent, std::span<const int32_t> tokens) {
  DIFFTX_CHECK(block >= 0 && block < blocks_ && refs_[block] > 0, "KV pool: register of block ", block,
               " that is not held");
  DIFFTX_CHECK(static_cast<int64_t>(tokens.size()) == block_tokens(), "KV pool: only full blocks are cached");
  if (!entries_[block].tokens.empty()) return;
  const auto [first, last] = by_key_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    const Entry& e = entries_[it->second];
    if (e.parent == parent && std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end())) return;
  }
  entries_[block] = Entry{key, parent, std::vector<int32_t>(tokens.begin(), tokens.end())};
  by_key_.emplace(key, block);
}

void KvPool::drop_from_cache(int32_t block) {
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

int64_t KvPool::cached() const { return static_cast<int64_t>(by_key_.size()); }

}  // namespace difftx
