// Attention allocation (paper §3.4, Table 3, Figure 1): on a prompt whose answer sits at a
// known place in a context, how much of its attention the query position gives the answer
// and how much the rest of the context (the "attention noise"), per layer and head, from the
// normalised head rows of attention_maps.h (each sums to 1; differential rows keep their signs).
// Keys outside the context (the question after it, say) count as neither.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/interrupt.h"
#include "model/model.h"

namespace difftx::eval {

struct TokenSpan {
  int64_t begin = 0, end = 0;  // positions [begin, end)
};

struct AllocationPrompt {
  std::vector<int32_t> tokens;
  int64_t query_position = 0;     // the row measured: usually the last token, which predicts the answer
  TokenSpan context;              // where the answer is hidden; noise is counted here
  std::vector<TokenSpan> answer;  // the answer's spans, inside the context
  double depth = 0;               // where the answer sits in the context, 0..1 (for the by-depth table)
};

// Throws an error naming `what` (the prompt) and the field that is out of place: empty tokens,
// ids outside the vocabulary, a prompt longer than max_positions, a query position outside the
// prompt, a context span outside [0, query_position], an empty or out-of-context answer span.
void check_prompt(const AllocationPrompt& prompt, int64_t vocab_size, int64_t max_positions, const std::string& what);

struct Allocation {
  double answer = 0;     // sum of the weights on the answer spans
  double noise = 0;      // sum of the weights on the rest of the context (signed, as the paper's)
  double noise_abs = 0;  // sum of |weights| there: noise that cancels between signs still shows
};

// Sums a normalised row (weights of keys 0..keys-1) over the prompt's spans. Spans reaching past
// the row are an error.
Allocation allocate(const double* weights, int64_t keys, const AllocationPrompt& prompt);

// The normalised head rows of the query position in every layer: one forward pass over the
// prompt up to and including the query position.
struct PromptRows {
  int64_t layers = 0, heads = 0, keys = 0;
  std::vector<double> weights;  // [layers][heads][keys]
  const double* row(int64_t layer, int64_t head) const { return weights.data() + (layer * heads + head) * keys; }
};
PromptRows prompt_rows(const model::Model& model, const AllocationPrompt& prompt);

// Means of allocate() over the prompts (every prompt weighs the same), over all layers and heads
// unless the table says otherwise. Depths are grouped by exact value. Rows that cannot be
// normalised (NaN, attention_maps.h) are left out of every mean and counted.
struct AllocationSummary {
  int64_t prompts = 0;
  int64_t rows = 0, skipped_rows = 0;            // (prompt, layer, head) rows, and those left out
  Allocation mean;                               // over prompts, layers and heads
  std::vector<double> depths;                    // distinct prompt depths, ascending
  std::vector<Allocation> by_depth;              // [depth]: over the prompts of that depth, layers, heads
  std::vector<Allocation> by_layer;              // [layer]: over prompts and heads
  std::vector<std::vector<Allocation>> by_head;  // [layer][head]: over prompts
};
AllocationSummary summarise_allocation(const std::vector<AllocationPrompt>& prompts, const std::vector<PromptRows>& rows);

// One row for a Figure-1 chart: the normalised row of (layer, head), or its mean over all layers
// (layer = -1) and/or all heads (head = -1; rows without a normalised form left out); the
// paper's Figure 1 averages over both.
std::vector<double> figure_row(const PromptRows& rows, int64_t layer, int64_t head);

// The whole Table 3 / Figure 1 analysis of a model on a set of prompts: the summary, and the
// Figure-1 row (figure_row with map_layer, map_head) of the prompt whose depth is nearest 0.5.
// `interrupt` is called after every prompt's forward pass.
struct AttentionAnalysis {
  AllocationSummary summary;
  size_t figure_prompt = 0;
  std::vector<double> figure_weights;
};
AttentionAnalysis analyse_attention(const model::Model& model, const std::vector<AllocationPrompt>& prompts,
                                    int64_t map_layer, int64_t map_head, const Interrupt& interrupt = {});

// The normalisation, in words, for reports (attention_maps.h has the reasoning).
extern const char* const kAllocationNormalisation;

}  // namespace difftx::eval
