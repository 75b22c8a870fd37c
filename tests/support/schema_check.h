// The tests' own JSON Schema validator for the keywords the grammar compiler supports, written
// from the specification (draft 2020-12 and ajv's formats) and nothing of the compiler: the
// independent check that every document a schema's grammar lets through validates. Also a
// random walk over a grammar's automaton that writes documents, and whole-text acceptance.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "grammar/automaton.h"

namespace difftx::testing {

// Empty when `value` validates against `schema` (the document `root`, for $ref); else why not.
std::string schema_violation(const nlohmann::json& schema, const nlohmann::json& value, const nlohmann::json& root);
inline std::string schema_violation(const nlohmann::json& schema, const nlohmann::json& value) {
  return schema_violation(schema, value, schema);
}

// Whether the automaton takes the whole text to a complete state.
bool accepts(grammar::Automaton& a, std::string_view text);
// The same, on a fresh automaton of the grammar.
bool accepts(const std::shared_ptr<const grammar::Grammar>& g, std::string_view text);

// A text the automaton accepts, chosen byte by byte at random among the bytes it allows after
// `prefix`, stopping where complete with probability `stop`; none after max_bytes without an end.
// A live state with no byte to go on with (a dead end), or a prefix refused, throws.
std::optional<std::string> random_document(grammar::Automaton& a, Rng& rng, double stop = 0.3, size_t max_bytes = 4000,
                                           std::string_view prefix = "");

}  // namespace difftx::testing
