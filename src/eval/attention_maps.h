// The attention weights of a trained model, materialised row by row for analysis (paper §3.4
// Table 3 and Figure 1), from the per-layer queries and keys after RoPE of a decoder_forward
// (model/taps.h).
//
// For query position t of one sequence:
//   softmax maps (maps as the kernels number them, attention_logits.h):
//     baseline: A_i, one per head;  diff: A1 = map 2i, A2 = map 2i+1 of head i;
//     diff2: A_j for the 2H query heads, head i pairing maps 2i and 2i+1 (docs/SPEC.md §2.3);
//     diff_grouped: groups of r signal maps and their noise map (docs/SPEC.md §2.5)
//   head rows, the signed weights each output head applies to the values:
//     baseline A_i;  diff A1 - lambda A2 (docs/SPEC.md §2.2);  diff2 A_{2i} - sigmoid(lambda_i(x_t)) A_{2i+1};
//     diff_grouped A_signal(i) - lambda A_noise(i) (variant.h)
//
// Normalisation (how differential rows are compared with softmax rows): a softmax row sums to 1,
// a head row sums to 1 - w, with w = lambda (diff, diff_grouped) or sigmoid(lambda_i(x_t)) (diff2). The
// normalised row divides the head row by that sum, keeping signs, so that it sums to 1 like a
// softmax row: "the share of the head's attention" means the same for every variant, and the
// scale that the V1 headwise RMSNorm (Eq. 3) removes anyway does not count. Negative weights
// stay negative; the noise they cancel is what the paper measures. A row that keeps less than
// 1% net mass (|1 - w| < kMinRowSum, w near 1) has no meaningful shares: its normalised weights
// are NaN, and the allocation means skip it (and count it).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/attention/attention.h"
#include "model/config.h"

namespace difftx::eval {

constexpr double kMinRowSum = 0.01;

struct AttentionRow {
  int64_t position = 0;          // query position t; every row has t + 1 keys, 0..t
  int64_t maps = 0, heads = 0;
  std::vector<double> logits;    // [maps][t + 1]: q . k / sqrt(d)
  std::vector<double> softmax;   // [maps][t + 1]
  std::vector<double> head;      // [heads][t + 1]: the signed head rows
  std::vector<double> weight;    // [heads]: w, the weight of the subtracted map (0 for baseline)

  int64_t keys() const { return position + 1; }
  const double* head_row(int64_t i) const { return head.data() + i * keys(); }
  // The head row divided by its sum 1 - w (see the header comment).
  std::vector<double> normalised(int64_t i) const;
};

// Row t of batch row b. q and k are [B, T, q_width] and [B, T, k_width] after RoPE; lambda as
// attention_forward takes it (null for baseline, the layer's scalar for diff and diff_grouped, [B, T, H] logits
// for diff2). Double precision throughout.
AttentionRow attention_row(const kernels::AttentionDims& dims, const float* q, const float* k, const float* lambda,
                           int64_t b, int64_t t);

}  // namespace difftx::eval
