// The logits of one causal softmax map, materialised for analysis (activation outliers, paper
// §3.7 Table 5; fake-quantized attention, attention_quantized.h). Maps are numbered as the
// fused kernels number them (flash_layout.h): baseline H maps, diff 2H (map 2i+s = q_s of
// head i with k_s of its kv group), diff2 2H query heads.
#pragma once
#include <cstdint>

#include "kernels/attention/attention.h"

namespace difftx::kernels {

// Softmax maps of one batch row: H for baseline, 2H for diff and diff2.
int64_t attention_map_count(const AttentionDims& dims);

// S[t * T + s] = scale * q_map[b, t] . k_key(map)[b, s] for every s <= t (scale 1/sqrt(d) gives
// the logits), in S of T x T floats. Computed in blocks of kLogitRows query rows, each against
// the keys up to its last row (about half the square's work): entries with s > t are
// unspecified.
constexpr int64_t kLogitRows = 64;
void attention_map_logits(const AttentionDims& dims, const float* q, const float* k, int64_t b, int64_t map,
                          float scale, float* S);

}  // namespace difftx::kernels
