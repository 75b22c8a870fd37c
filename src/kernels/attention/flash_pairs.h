// The pair op that turns per-map outputs into output heads (diff, diff2) and its backward:
//   out_i = a_{2i} - w * a_{2i+1},  w = lambda (diff, SPEC §2.2) or sigmoid(logit[t, i]) (diff2, §2.3)
// Backward: da_{2i} = dout_i, da_{2i+1} = -w dout_i, dw = -<dout_i, a_{2i+1}>.
// Per-map outputs a are [B, T, maps, dv] (flash_layout.h).
#pragma once
#include "kernels/attention/flash_layout.h"

namespace difftx::flash {

// diff and diff2 only.
void pair_forward(const MapLayout& L, const float* a, const float* lambda, float* out);

// Everything the flash backward needs from the output side, for every variant (baseline: a = out,
// da_j = dout_j):
//   dA[b][j][t][0:dv] = da_j[b, t]   (packed per map, like the queries)
//   D[b][j][t]        = <da_j[b, t], a_j[b, t]>   (FlashAttention-2's rowsum(dO o O))
//   dlambda           = d loss / d lambda (diff: one scalar) or / d logits (diff2: [B, T, H]); overwritten.
// row_dlambda [B*T] is scratch: diff sums its scalar gradient per token row first, then over rows
// in a fixed order, so that the result does not depend on the thread count.
void output_grads(const MapLayout& L, const float* a, const float* lambda, const float* dout, float* dA,
                  float* D, float* row_dlambda, float* dlambda);

}  // namespace difftx::flash
