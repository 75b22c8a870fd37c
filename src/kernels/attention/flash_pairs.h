// The pair op that turns per-map outputs into output heads (diff, diff2, diff_grouped) and its backward:
//   out_i = a_s - w * a_n,  s / n = the signal / noise map of head i (variant.h),
//   w = lambda (diff, diff_grouped, docs/SPEC.md §2.2, §2.5) or sigmoid(logit[t, i]) (diff2, §2.3)
// Backward: da_s = dout_i, da_n = -sum of w dout_i over the heads sharing n, dw = -<dout_i, a_n>.
// Per-map outputs a are [B, T, maps, dv] (flash_layout.h).
#pragma once
#include "kernels/attention/flash_layout.h"

namespace difftx::kernels::flash {

// Paired variants only: out_i for token rows [t0, t0 + rows) of batch b and output heads
// [head0, head0 + heads), from a rows the caller has finished. A flash work item calls it for its
// own query tile and group: a head's signal and noise maps always lie inside one group.
void pair_rows(const MapLayout& L, const float* a, const float* lambda, float* out, int64_t b, int64_t t0,
               int64_t rows, int64_t head0, int64_t heads);

// Everything the flash backward needs from the output side, for every variant (baseline: a = out,
// da_j = dout_j):
//   dA[b][j][t][0:dv] = da_j[b, t]   (packed per map, like the queries)
//   D[b][j][t]        = <da_j[b, t], a_j[b, t]>   (FlashAttention-2's rowsum(dO o O))
//   dlambda           = diff2: d loss / d logits [B, T, H], overwritten
//   row_dlambda [B*T] = diff, diff_grouped: each token row's share of d loss / d lambda (see finish_dlambda)
// A worksharing loop over token rows without a closing barrier, like the packs (flash_pack.h).
void output_grads(const MapLayout& L, const float* a, const float* lambda, const float* dout, float* dA,
                  float* D, float* row_dlambda, float* dlambda);
// diff, diff_grouped: dlambda[0] = the sum of row_dlambda in row order, so that the result does not depend on
// the thread count. Call once output_grads is complete on every thread. No-op for other variants.
void finish_dlambda(const MapLayout& L, const float* row_dlambda, float* dlambda);

}  // namespace difftx::kernels::flash
