// The token constraint a request's output rules make (grammar/constraint.h): one grammar over the
// whole reply, composed of
//   - a reasoning block first where the prompt left one open: any text, then its closing marker;
//   - then the body: the GBNF grammar; or the calls of `tool_choice` required / a named function;
//     or, with tools and `auto`, free text that may open a turn of calls (constrained from the
//     marker on) - or the JSON document, where response_format asks for one; or the document;
// and a reasoning budget (max_reasoning_tokens) that forces the closing marker when spent.
// Compiled grammars are cached by their rules, so requests with the same schema share the
// automaton and its token masks. A schema, tool or grammar that cannot be enforced is a 400
// naming the field and the keyword's path.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "grammar/token_vocabulary.h"
#include "infer/token_constraint.h"
#include "serve/output_request.h"
#include "serve/reasoning.h"

namespace difftx::data {
class Tokenizer;
}

namespace difftx::serve {

// What a served model brings to constraints.
struct ConstraintModel {
  const data::Tokenizer* tokenizer = nullptr;
  std::shared_ptr<const grammar::TokenVocabulary> vocabulary;
  std::optional<ToolFormat> tool_format;         // how its template writes tool calls
  std::optional<ReasoningMarkers> reasoning;     // its reasoning block's markers
  int64_t max_tool_calls = 8;                    // calls in a turn where parallel_tool_calls allows several
};

class ConstraintCache {
 public:
  explicit ConstraintCache(size_t capacity = 16) : capacity_(capacity) {}
  // The constraint of the rules (nullptr: nothing constrains the output). reasoning_open: the
  // rendered prompt left a reasoning block open.
  std::shared_ptr<const infer::TokenConstraintSource> get(const ConstraintModel& m, const OutputRequest& rules,
                                                          bool reasoning_open);

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const infer::TokenConstraintSource>>> entries_;  // most recent first
};

}  // namespace difftx::serve
