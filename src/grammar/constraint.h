// A request's token constraint (infer/token_constraint.h) from a grammar over its whole output,
// and a reasoning budget:
// - grammar: each draw is masked to the tokens that keep the output a prefix of some document
//   (token_masks.h); the request's stop tokens are allowed where the output is a whole document,
//   and the request ends when nothing may follow. A grammar that lets the model think first
//   (text up to "</think>", then the document) or write free text before a tool call is just
//   a grammar: serve composes it.
// - reasoning budget: after `budget` tokens inside the reasoning block (infer/reasoning_block.h:
//   open from the start, or opened by the output's first bytes), the closing marker's tokens are
//   forced.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/token_masks.h"
#include "infer/reasoning_block.h"
#include "infer/token_constraint.h"

namespace difftx::grammar {

struct ReasoningBudget {
  infer::ReasoningBlock block;
  std::vector<int32_t> close_ids;  // the tokens of its closing marker
  int64_t budget = 0;              // tokens inside the block before it is closed
};

struct ConstraintSpec {
  std::shared_ptr<const TokenVocabulary> vocabulary;  // the sampler's: masks cover its ids
  std::shared_ptr<TokenMasks> grammar;                // over the same vocabulary; none: any output
  std::optional<ReasoningBudget> reasoning;
};

class GrammarConstraintSource : public infer::TokenConstraintSource {
 public:
  explicit GrammarConstraintSource(ConstraintSpec spec);
  int64_t vocab_size() const override { return spec_.vocabulary->size(); }
  std::unique_ptr<infer::TokenConstraint> start(std::span<const int32_t> stop_tokens) const override;
  const ConstraintSpec& spec() const { return spec_; }

 private:
  ConstraintSpec spec_;
};

// The constraint to the documents that validate against a JSON Schema (json_grammar.h), over the
// vocabulary. A schema that cannot be enforced is a difftx::Error naming the keyword's path.
std::shared_ptr<const GrammarConstraintSource> json_schema_constraint(
    const nlohmann::ordered_json& schema, std::shared_ptr<const TokenVocabulary> vocabulary);

}  // namespace difftx::grammar
