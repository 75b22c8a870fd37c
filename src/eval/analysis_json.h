// The analyses' results as the objects of the shared results schema (results.json of `difftx
// experiment compare`, written also by `difftx analyze ... --json`): "attention_allocation",
// "attention_map", "outliers" and "quantization". Fields beyond the schema's are extras that
// readers ignore; NaN becomes null.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/tokenizer.h"
#include "eval/attention_allocation.h"
#include "eval/outliers.h"
#include "eval/quantization.h"

namespace difftx {

nlohmann::json allocation_json(const AllocationSummary& summary);
// weights: a figure_row of the prompt; tokens: token_strings of its ids up to the query position.
nlohmann::json attention_map_json(const AllocationPrompt& prompt, int64_t layer, int64_t head,
                                  const std::vector<double>& weights, const std::vector<std::string>& tokens);
nlohmann::json outliers_json(const OutlierResult& result);
nlohmann::json quantization_json(const std::vector<QuantizationPoint>& points);

// Each id decoded on its own; bytes that are not valid UTF-8 there (a character split across
// tokens) become U+FFFD, so the strings are valid JSON text.
std::vector<std::string> token_strings(const data::Tokenizer& tokenizer, const std::vector<int32_t>& ids);

}  // namespace difftx
