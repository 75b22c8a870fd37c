// Re-layouts done once per call before the flash loops, so that every tile they touch is
// contiguous and zero-padded: O(T) memory. Each is an OpenMP worksharing loop over tokens or
// tiles without a closing barrier: called by every thread of a parallel region, the threads
// share the work (put a barrier before reading the result); called outside a region, the
// calling thread does it all.
#pragma once
#include <cstdint>

#include "kernels/attention/flash_layout.h"
#include "kernels/isa.h"

namespace difftx::kernels::DIFFTX_ISA::flash {
using namespace ::difftx::kernels::flash;  // Path and the layout (flash_layout.h)

// Qp[b][j][t][0:d] = q[b, t, j*d : (j+1)*d] * factor  (factor = log2(e)/sqrt(d): log2 scores).
void pack_queries(const MapLayout& L, const float* q, float factor, float* Qp);

// Transposed, zero-padded tiles of a token-major tensor x [B, T, heads*width]:
// X[b][h][tile][0:width][0:kTile] with X[..][i][c] = x[b, tile*kTile + c, h*width + i].
// Used for K (heads = key_heads, width = d) and, in the backward pass, V (groups, dv).
int64_t transposed_tiles_floats(const MapLayout& L, int64_t heads, int64_t width);
void pack_transposed_tiles(const MapLayout& L, const float* x, int64_t heads, int64_t width, float* X);

// Zero-padded tiles of the same tensor, rows kept: X[b][h][tile][0:kTile][0:width] with
// X[..][c][i] = x[b, tile*kTile + c, h*width + i]; as many floats as the transposed tiles.
// A product that walks a tile row by row then reads one contiguous block instead of rows
// heads*width apart (which, at a power-of-two row stride, map to a few L1 sets and evict each
// other). Used for V in the forward pass and K (for dQ) in the backward pass.
void pack_row_tiles(const MapLayout& L, const float* x, int64_t heads, int64_t width, float* X);

}  // namespace difftx::kernels::DIFFTX_ISA::flash
