// A small vocabulary that spells any JSON document, for the engine's constrained tests on
// random-weight models: every printable ASCII character and newline (as byte-level BPE, it can
// write any text), the two bytes of 'é', pieces of JSON, and an end-of-sequence control token.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "grammar/constraint.h"
#include "grammar/token_vocabulary.h"
#include "support/engine_runs.h"

namespace difftx::testing {

constexpr int64_t kJsonVocab = 160;
constexpr int32_t kJsonEos = kJsonVocab - 1;  // the control token

std::shared_ptr<const grammar::TokenVocabulary> json_vocabulary();

// The constraint to the documents that validate against `schema`, over `vocabulary`.
std::shared_ptr<const grammar::GrammarConstraintSource> schema_constraint(
    const nlohmann::ordered_json& schema, const std::shared_ptr<const grammar::TokenVocabulary>& vocabulary);

// The bytes the stream's tokens write.
std::string text_of(const Stream& s, const grammar::TokenVocabulary& vocabulary);

}  // namespace difftx::testing
