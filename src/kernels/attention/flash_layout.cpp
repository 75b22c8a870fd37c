#include "kernels/attention/flash_layout.h"

#include "core/buffer.h"

namespace difftx::flash {

MapLayout::MapLayout(const AttentionDims& a) : dims(a) {
  const bool baseline = a.kind == AttentionKind::baseline;
  maps = baseline ? a.H : 2 * a.H;
  groups = a.Hkv;
  maps_per_group = maps / groups;
  keys_per_group = a.kind == AttentionKind::diff ? 2 : 1;
  key_heads = groups * keys_per_group;
  dv = a.kind == AttentionKind::diff ? 2 * a.d : a.d;
  tiles = (a.T + kTile - 1) / kTile;
}

int64_t MapLayout::key_head(int64_t map) const {
  const int64_t group = map / maps_per_group;
  // diff: map 2i+s uses k_s of its group (SPEC §2.2), i.e. key head 2g + s.
  return dims.kind == AttentionKind::diff ? 2 * group + map % 2 : group;
}

float* scratch(int64_t floats) {
  thread_local Buffer<float> block;
  if (block.size() < floats) block.resize(floats);
  return block.data();
}

}  // namespace difftx::flash
