#include "infer/kv_pool.h"

#include <new>

#include "core/checked.h"
#include "core/error.h"
#include "infer/kv_cache_manager.h"
#include "infer/state_pool.h"

namespace difftx::infer {
namespace {

kernels::DecodeAttentionDims block_dims(const model::ModelConfig& config, kernels::KvStorage storage,
                                        int64_t block_tokens) {
  DIFFTX_CHECK(block_tokens >= kernels::kKeyTile && block_tokens % kernels::kKeyTile == 0 && block_tokens <= (1 << 16),
               "KV block of ", block_tokens, " tokens: must be a multiple of ", kernels::kKeyTile, " in [",
               kernels::kKeyTile, ", 65536]");
  return kernels::DecodeAttentionDims{config.attention_variant(), block_tokens, storage};
}

}  // namespace

int64_t KvPool::block_bytes(const model::ModelConfig& config, kernels::KvStorage storage, int64_t block_tokens) {
  const kernels::DecodeAttentionDims d = block_dims(config, storage, block_tokens);
  return kv_block_layers(kv_cache_groups(config)) * (kernels::key_region_bytes(d) + kernels::value_region_bytes(d));
}

int64_t KvPool::max_blocks(const backends::Backend& backend, const model::ModelConfig& config,
                           kernels::KvStorage storage, int64_t block_tokens) {
  const int64_t layers = kv_block_layers(kv_cache_groups(config));
  return backend.max_paged_kv_regions(block_bytes(config, storage, block_tokens) / layers) / layers;
}

int64_t KvPool::sequence_bytes(const model::ModelConfig& config, kernels::KvStorage storage, int64_t block_tokens,
                               int64_t tokens) {
  const int64_t blocks = sequence_blocks(kv_cache_groups(config), tokens, block_tokens);
  const int64_t state = config.hybrid ? StatePool::slot_bytes(config) : 0;
  return blocks * block_bytes(config, storage, block_tokens) + state;
}

KvPool::KvPool(backends::Backend& backend, const model::ModelConfig& config, kernels::KvStorage storage,
               int64_t block_tokens, int64_t blocks, OptionSpelling spelling)
    : BlockPool(blocks, block_tokens),
      spelling_(spelling),
      layers_(kv_block_layers(kv_cache_groups(config))),
      dims_(block_dims(config, storage, block_tokens)),
      key_bytes_(kernels::key_region_bytes(dims_)),
      layer_bytes_(key_bytes_ + kernels::value_region_bytes(dims_)) {
  const auto bytes = product_at_most({blocks, layers_, layer_bytes_}, int64_t{1} << 46);
  DIFFTX_CHECK(bytes.has_value(), "KV pool: ", blocks, " blocks of ", block_bytes(), " bytes exceed 64 TiB");
  const std::string fewer = concat("ask for fewer with ", option_name("kv_tokens", spelling), " or ",
                                   option_name("kv_bytes", spelling));
  const int64_t most = max_blocks(backend, config, storage, block_tokens);
  DIFFTX_CHECK(blocks <= most, "KV pool: ", blocks, " blocks of ", block_tokens, " tokens (", *bytes, " bytes): ",
               backend.info().name, "'s paged attention takes at most ", most, " (", most * block_bytes(),
               " bytes); ", fewer);
  // Not zeroed: on the CPU a page of the pool becomes resident when a block on it is first written.
  const auto too_big = [&](const char* why) {
    fail("KV pool: ", why, " allocating ", *bytes, " bytes (", blocks, " blocks of ", block_tokens,
         " tokens); ", fewer);
  };
  try {
    storage_ = backend.allocate(*bytes, false);
  } catch (const std::bad_alloc&) {
    too_big("out of memory");
  } catch (const Error& e) {
    too_big(e.what());
  }
}

}  // namespace difftx::infer
