// The paged KV cache: one pool of fixed-size blocks shared by every sequence of the engine.
// A block holds block_tokens positions of every layer, each layer's keys and values in the
// layout of decode_attention.h with capacity = block_tokens (so a sequence's blocks are the
// pages decode_attention reads). The blocks' bookkeeping (reference counts, free list, prefix
// cache) is the BlockPool's (block_pool.h); which sequence holds which block is the
// KvCacheManager's (kv_cache_manager.h).
//
// The storage is allocated without being written, so the memory a process touches follows the
// blocks used (lowest-numbered blocks are handed out first), not the pool's size.
#pragma once
#include <cstdint>
#include <memory>

#include "infer/block_pool.h"
#include "kernels/attention/decode_attention.h"
#include "model/config.h"

namespace difftx {

class KvPool : public infer::BlockPool {
 public:
  // blocks >= 1; block_tokens a positive multiple of kKeyTile.
  KvPool(const ModelConfig& config, KvStorage storage, int64_t block_tokens, int64_t blocks);

  const DecodeAttentionDims& dims() const { return dims_; }  // one block's layout
  int64_t layer_bytes() const { return layer_bytes_; }
  int64_t block_bytes() const { return layers_ * layer_bytes_; }
  static int64_t block_bytes(const ModelConfig& config, KvStorage storage, int64_t block_tokens);

  // One layer's keys and values in block b (decode_attention.h's regions).
  unsigned char* keys(int32_t block, int64_t layer) {
    return storage_.get() + (block * layers_ + layer) * layer_bytes_;
  }
  unsigned char* values(int32_t block, int64_t layer) { return keys(block, layer) + key_bytes_; }

 private:
  int64_t layers_;
  DecodeAttentionDims dims_;
  int64_t key_bytes_, layer_bytes_;
  std::unique_ptr<unsigned char, void (*)(void*)> storage_;
};

}  // namespace difftx
