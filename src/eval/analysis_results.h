// The analyses' results as the objects of the results schema (results/results.h; results.json
// of `difftx experiment compare`, written also by `difftx analyze ... --json`):
// "attention_allocation", "attention_map", "outliers" and "quantization".
#pragma once
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "eval/attention_allocation.h"
#include "eval/outliers.h"
#include "results/results.h"

namespace difftx::eval {

results::AttentionAllocation allocation_results(const AllocationSummary& summary);
// weights: a figure_row of the prompt; tokens: token_strings of its ids up to the query position.
results::AttentionMap attention_map_results(const AllocationPrompt& prompt, int64_t layer, int64_t head,
                                            const std::vector<double>& weights, const std::vector<std::string>& tokens);
results::Outliers outlier_results(const OutlierResult& result);

// Each id decoded on its own; bytes that are not valid UTF-8 there (a character split across
// tokens) become U+FFFD, so the strings are valid JSON text.
std::vector<std::string> token_strings(const data::Tokenizer& tokenizer, const std::vector<int32_t>& ids);

}  // namespace difftx::eval
