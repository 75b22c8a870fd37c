#include "kernels/attention/flash_layout.h"

#include "core/buffer.h"

namespace difftx::kernels::flash {

MapLayout::MapLayout(const AttentionDims& a)
    : dims(a),
      variant(a.variant()),
      maps(variant.maps()),
      groups(a.Hkv),
      maps_per_group(variant.maps_per_kv_head()),
      key_heads(a.Hkv * variant.key_heads_per_kv_head()),
      keys_per_group(variant.key_heads_per_kv_head()),
      dv(variant.value_width()),
      tiles((a.T + kTile - 1) / kTile) {}

float* scratch(int64_t floats) {
  thread_local Buffer<float> block;
  if (block.size() < floats) block.resize(floats);
  return block.data();
}

}  // namespace difftx::kernels::flash
