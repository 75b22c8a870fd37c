// allOf as one schema (json_grammar.h): the conjunction of its branches, and of the keywords beside
// it, merged keyword by keyword, as llama.cpp's and xgrammar's schema compilers take it:
// - `type`: the types every branch allows;
// - `properties` united, a property several branches give is the allOf of their schemas;
//   `required` united; `additionalProperties: false` keeps only the names its own branch lists;
// - `items`: the allOf of theirs; `prefixItems` / `additionalItems` from one branch;
// - the tighter of each bound (`minimum`, `maxLength`, `minItems`, ...);
// - `enum` / `const`: the values every branch that has one lists;
// - a `pattern` or `format` given once, or the same in each;
// - a branch's `anyOf` / `oneOf` is distributed: allOf [A, anyOf [B, C]] is anyOf [allOf [A, B],
//   allOf [A, C]], each merged;
// - a `$ref` branch is the schema it refers to; nested allOf are flattened.
// What cannot be merged is a GrammarError naming it: two different patterns or formats, an
// `additionalProperties` schema (it speaks of the names its own branch does not list), anyOf /
// oneOf in two branches, draft 4's boolean exclusive bounds, a `false` branch.
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace difftx::grammar {

// The schema a chain of "$ref"s from `schema` (at `path`) ends at.
using Dereference =
    std::function<const nlohmann::ordered_json&(const nlohmann::ordered_json& schema, const std::string& path)>;

// s holds "allOf" (s at `path`); the result holds no allOf at its top (a property's or items'
// schema may be an allOf of the branches' schemas, merged when it is compiled).
nlohmann::ordered_json merge_all_of(const nlohmann::ordered_json& s, const std::string& path,
                                    const Dereference& dereference);

}  // namespace difftx::grammar
