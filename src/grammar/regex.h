// A regular expression (the ECMA-262 subset JSON Schema's `pattern` is written in, with the `u`
// flag as validators such as ajv use it) -> a grammar rule matching the strings it matches.
//
// Supported: literals and escapes (\t \n \r \f \v \0 \xHH \uHHHH \u{H...} and escaped
// punctuation), `.`, classes ([a-z], [^...], \d \D \w \W \s \S inside and outside them), groups
// ((...), (?:...), (?<name>...)), alternation, quantifiers (* + ? {m} {m,} {m,n}, lazy or not:
// the set of strings is the same), and ^ / $ at the start / end of a top-level alternative.
// As in JSON Schema, a pattern is a search: an alternative without ^ may have anything before
// it, one without $ anything after it; as vLLM's `regex` output takes it, the whole text is one
// match (RegexMatch::whole), ^ and $ then adding nothing. Anything else (backreferences, lookaround, \b, anchors
// elsewhere, flags) is a GrammarError naming it.
#pragma once
#include <functional>
#include <string_view>

#include "grammar/grammar.h"

namespace difftx::grammar {

// `character(ranges)` gives the element matching one character of the code point ranges, in
// whatever encoding the caller's text uses (a JSON string's escapes, say).
using CharacterRule = std::function<Element(const CodePointRanges&)>;

enum class RegexMatch { search, whole };

// How many characters (code points) a match may have: min to max, max -1 for no limit.
struct MatchLengths {
  int64_t min = 0, max = -1;
};

// The rule; *lengths (where given) the lengths its matches may have.
int32_t compile_regex(GrammarBuilder& b, std::string_view pattern, const CharacterRule& character,
                      RegexMatch match = RegexMatch::search, MatchLengths* lengths = nullptr);

}  // namespace difftx::grammar
