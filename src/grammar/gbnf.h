// GBNF text (llama.cpp's grammar format) -> Grammar:
//
//   root   ::= object                     # a rule per definition; `root`, which must be defined, is the start
//   object ::= "{" ws ( pair ( "," ws pair )* )? "}"
//   pair   ::= [a-z]+ ":" ws [0-9]{1,3}    # literals, classes ([^...], ranges, escapes), . any character
//   ws     ::= [ \t\n]?                    # groups, * + ? {m} {m,} {m,n}, | alternatives
//
// Literals and classes are Unicode code points, matched as UTF-8; escapes \n \r \t \\ \" \] \-
// \xHH \uHHHH \UHHHHHHHH. A sequence ends at the end of a line unless a group is open or the line
// ends with |; a rule's body may start on the line after its ::=, and spaces may stand before a
// repetition operator, as llama.cpp reads them. Every rule used must be defined, whether or not
// root reaches it. Errors name the line and column.
#pragma once
#include <memory>
#include <string_view>

#include "grammar/grammar.h"

namespace difftx::grammar {

std::shared_ptr<const Grammar> parse_gbnf(std::string_view text, GrammarLimits limits = {});
// The same, as rules of `builder` (parse first: names the builder already has would clash with
// the text's); returns the start rule.
int32_t parse_gbnf_into(GrammarBuilder& builder, std::string_view text);

}  // namespace difftx::grammar
