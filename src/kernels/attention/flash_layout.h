// How the fused (flash) kernels walk the softmax maps of a variant (variant.h): maps that share
// a kv head form a contiguous group, which one work item processes together so that each K/V
// tile is read once for all of them. Per-map outputs a_j are stored token-major
// [B, T, maps, dv] (for baseline that is `out` itself, else AttentionSaved::maps_out).
#pragma once
#include <cstdint>

#include "core/arena_plan.h"
#include "kernels/attention/attention.h"

namespace difftx::kernels::flash {

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
  AttentionVariant variant;
  int64_t maps;            // softmax maps
  int64_t groups;          // value heads
  int64_t maps_per_group;  // maps of group g: [g * maps_per_group, (g + 1) * maps_per_group)
  int64_t key_heads;       // key heads of width d in k
  int64_t keys_per_group;  // key heads a group reads: 2 for diff (k1, k2), else 1
  int64_t dv;              // value width of one map
  int64_t tiles;           // ceil(T / kTile)

  // The key head of map j; it lies in [group * keys_per_group, (group + 1) * keys_per_group).
  int64_t key_head(int64_t map) const { return variant.key_head(map); }
};

// Carves named parts out of one scratch block (64-byte aligned offsets).
using ScratchLayout = ArenaPlan;

// The calling thread's scratch block, grown (never shrunk) to at least `floats`. Contents are
// not kept between calls.
float* scratch(int64_t floats);

}  // namespace difftx::kernels::flash
