// The paged KV cache: one pool of fixed-size blocks shared by every sequence of the engine.
// A block holds block_tokens positions of the layers of one page group (kv_cache_manager.h,
// kv_block_layers: every layer of docs/SPEC.md's decoder; one attention layer of a hybrid stack),
// each layer's keys and values in the layout of decode_attention.h with capacity = block_tokens
// (so a sequence's blocks are the pages decode_attention reads). The blocks' bookkeeping
// (reference counts, free list, prefix cache) is the BlockPool's (block_pool.h); which sequence
// holds which block is the KvCacheManager's (kv_cache_manager.h).
//
// The storage is allocated without being written, so the memory a process touches follows the
// blocks used (lowest-numbered blocks are handed out first), not the pool's size.
#pragma once
#include <cstdint>
#include <memory>

#include "backends/backend.h"
#include "core/option_name.h"
#include "infer/block_pool.h"
#include "kernels/attention/decode_attention.h"
#include "model/config.h"

namespace difftx::infer {

class KvPool : public BlockPool {
 public:
  // blocks in [1, max_blocks]; block_tokens a positive multiple of kKeyTile. The storage is on `backend`.
  // Errors name the options that size the pool as `spelling` writes them.
  KvPool(backends::Backend& backend, const model::ModelConfig& config, kernels::KvStorage storage, int64_t block_tokens,
         int64_t blocks, OptionSpelling spelling);

  const kernels::DecodeAttentionDims& dims() const { return dims_; }  // one block's layout
  int64_t layer_bytes() const { return layer_bytes_; }
  int64_t block_bytes() const { return layers_ * layer_bytes_; }
  static int64_t block_bytes(const model::ModelConfig& config, kernels::KvStorage storage, int64_t block_tokens);
  // The most blocks a pool on `backend` may hold (Backend::max_paged_kv_regions).
  static int64_t max_blocks(const backends::Backend& backend, const model::ModelConfig& config,
                            kernels::KvStorage storage, int64_t block_tokens);
  // What one sequence of `tokens` positions holds at most: its blocks in every page group
  // (sequence_blocks) and, for a hybrid stack, its Mamba state slot (state_pool.h).
  static int64_t sequence_bytes(const model::ModelConfig& config, kernels::KvStorage storage, int64_t block_tokens,
                                int64_t tokens);

  // The storage as the backend's paged ops read it: the keys and values of a group's i-th layer
  // in block b at keys(b, i) (decode_attention.h's regions).
  backends::PagedKv paged() const {
    return {dims_, storage_.as<unsigned char>(), layers_, layer_bytes_, key_bytes_, blocks(), spelling_};
  }

 private:
  OptionSpelling spelling_;
  int64_t layers_;
  kernels::DecodeAttentionDims dims_;
  int64_t key_bytes_, layer_bytes_;
  backends::DeviceBuffer storage_;
};

}  // namespace difftx::infer
