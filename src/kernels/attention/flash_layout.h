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
constexpr int64_t kBand = 16;  // row band of the causal diagonal tile

// Splits n tile rows into bands for fn(b0, b1). On the causal diagonal tile (query tile == key
// tile) bands are kBand rows, so that a product can skip the masked triangle: query rows
// [b0, b1) see keys [0, b1), key rows [b0, b1) are seen by queries [b0, n). Off the diagonal
// there is one band of all rows.
template <typename Fn>
void for_each_band(int64_t n, bool diag, Fn&& fn) {
  const int64_t step = diag ? kBand : n;
  for (int64_t b0 = 0; b0 < n; b0 += step) fn(b0, b0 + step < n ? b0 + step : n);
}

// Score tile columns that cover `keys` keys on the vector path (a multiple of 16, <= kTile).
inline int64_t score_columns(int64_t keys) { return (keys + 15) / 16 * 16; }

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
