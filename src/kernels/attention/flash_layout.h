// How the fused (flash) kernels see every attention variant: as a set of causal softmax
// "maps" (query sub-heads of width d), each pairing one query sub-head with one key head and
// one value head of width dv. Maps that share a value head form a contiguous group, which one
// work item processes together so that each K/V tile is read once for all of them.
//   baseline: H maps, group g = kv head g (n_rep maps), key head g, dv = d
//   diff:     2H maps, map 2i+s = q_s of head i (SPEC §2.2); group g = value head g (2 n_rep maps),
//             key head 2g+s (k_s of kv group g), dv = 2d
//   diff2:    2H maps, map j = query head j (SPEC §2.3); group g = kv head g (2H/Hkv maps),
//             key head g, dv = d
// Map j always reads q columns [j*d, (j+1)*d). Per-map outputs a_j are stored token-major
// [B, T, maps, dv] (for baseline that is `out` itself, else AttentionSaved::maps_out).
#pragma once
#include <cstdint>

#include "kernels/attention/attention.h"

namespace difftx::flash {

constexpr int64_t kTile = 64;  // query and key tile (rows of Q, rows of K) of the flash loops

struct MapLayout {
  explicit MapLayout(const AttentionDims& dims);

  AttentionDims dims;
  int64_t maps;            // softmax maps
  int64_t groups;          // value heads
  int64_t maps_per_group;  // maps of group g: [g * maps_per_group, (g + 1) * maps_per_group)
  int64_t key_heads;       // key heads of width d in k
  int64_t keys_per_group;  // key heads a group reads: 2 for diff (k1, k2), else 1
  int64_t dv;              // value width of one map
  int64_t tiles;           // ceil(T / kTile)

  // The key head of map j; it lies in [group * keys_per_group, (group + 1) * keys_per_group).
  int64_t key_head(int64_t map) const;
};

// Carves named parts out of one scratch block: reserve() returns float offsets, 64-byte aligned.
class ScratchLayout {
 public:
  int64_t reserve(int64_t floats) {
    const int64_t at = size_;
    size_ += (floats + 15) / 16 * 16;
    return at;
  }
  int64_t size() const { return size_; }

 private:
  int64_t size_ = 0;
};

// The calling thread's scratch block, grown (never shrunk) to at least `floats`. Contents are
// not kept between calls.
float* scratch(int64_t floats);

}  // namespace difftx::flash
