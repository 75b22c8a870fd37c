#include "serve/output_constraint.h"

#include "data/tokenizer.h"
#include "grammar/constraint.h"
#include "grammar/gbnf.h"
#include "grammar/json_grammar.h"
#include "grammar/regex.h"
#include "serve/api_error.h"

namespace difftx::serve {
namespace {

using grammar::Element;
using grammar::GrammarBuilder;
using grammar::Sequence;
using grammar::GrammarError;
using nlohmann::json;

constexpr int64_t kMaskCacheBytes = int64_t{64} << 20;  // per grammar

// A 400 for `param`, saying what of it cannot be enforced and where.
[[noreturn]] void refuse(const std::string& param, const std::string& what, const GrammarError& e) {
  const std::string where = e.where.empty() || e.where == "grammar" ? "" : " at " + e.where;
  throw ApiError(400, what + " cannot be enforced" + where + ": " + e.what(), param, "unsupported_schema");
}

std::string constraint_name(const OutputRequest& r) {
  return r.schema ? "the schema" : r.regex ? "the regex" : r.choice ? "the choices" : "the grammar";
}

// The document the output is, where a schema, a regex or a list of choices says it: a schema's
// value after a little white space; the whole text one match of the regex; one of the choices.
std::optional<int32_t> document_rule(grammar::JsonGrammar& j, const OutputRequest& r) {
  GrammarBuilder& b = j.builder();
  if (r.schema) return b.add_rule("document", {{j.ws(), GrammarBuilder::ref(j.schema(*r.schema))}});
  if (r.regex)
    return grammar::compile_regex(
        b, *r.regex, [&b](const grammar::CodePointRanges& c) { return GrammarBuilder::ref(b.code_points("char", c)); },
        grammar::RegexMatch::whole);
  if (r.choice) {
    const int32_t rule = b.add_rule("choice");
    for (const std::string& c : *r.choice) b.add_alternative(rule, b.literal(c));
    return rule;
  }
  return std::nullopt;
}

// The functions a reply may call: all of them, or the one tool_choice names.
std::vector<ToolFunction> callable(const OutputRequest& r) {
  if (!r.named_function) return r.functions;
  for (const ToolFunction& f : r.functions)
    if (f.name == *r.named_function) return {f};
  return {};
}

// Everything the constraint is built from, as JSON (null where absent), so that no two different
// requests share a key whatever their texts hold.
std::string key_of(const OutputRequest& r, bool reasoning_open) {
  const auto or_null = [](const auto& v) { return v ? json(*v) : json(); };
  json key = json::array({r.schema ? json(r.schema->dump()) : json(), or_null(r.grammar), or_null(r.regex),
                          or_null(r.choice), static_cast<int>(r.tool_choice), or_null(r.named_function),
                          r.parallel_tool_calls, or_null(r.max_reasoning_tokens), reasoning_open});
  if (r.parses_tool_calls())
    for (const ToolFunction& f : r.functions) key.push_back(json::array({f.name, f.parameters.dump()}));
  return key.dump();
}

std::shared_ptr<const infer::TokenConstraintSource> build(const ConstraintModel& m, const OutputRequest& r,
                                                          bool reasoning_open) {
  const bool tools = r.parses_tool_calls();
  const std::vector<ToolFunction> functions = tools ? callable(r) : std::vector<ToolFunction>{};
  const int64_t max_calls = r.parallel_tool_calls ? m.max_tool_calls : 1;
  // Each part alone first, so that an error names the field it comes from.
  if (r.constrains_text()) try {
      GrammarBuilder alone;
      grammar::JsonGrammar j(alone);
      if (r.grammar) grammar::parse_gbnf(*r.grammar);
      else alone.build(*document_rule(j, r));
    } catch (const GrammarError& e) {
      refuse(r.format_field, constraint_name(r), e);
    }
  if (tools)
    for (size_t i = 0; i < r.functions.size(); ++i) {
      const std::string path = concat("#/tools/", i, "/function/parameters");
      try {
        GrammarBuilder b;
        grammar::JsonGrammar j(b);
        b.build(j.schema(r.functions[i].parameters, path));
      } catch (const GrammarError& e) {
        refuse("tools", "the tools", e.where.empty() ? GrammarError(path, e.what()) : e);
      }
    }

  grammar::ConstraintSpec spec;
  spec.vocabulary = m.vocabulary;
  GrammarBuilder b;
  // The markers that are control tokens of the model's tokenizer (a family's call markers, the
  // reasoning block's close): the grammar writes them as their bytes or as their token.
  std::vector<std::string> markers, control_markers;
  std::vector<int32_t> controls;
  if (tools) markers = tool_call_markers(*m.tool_format);
  if (reasoning_open) markers.push_back(m.reasoning->close);
  for (const std::string& marker : markers)
    if (const auto it = m.tokenizer->special_tokens().find(marker); it != m.tokenizer->special_tokens().end() &&
                                                                    it->second < m.vocabulary->size() &&
                                                                    m.vocabulary->control(it->second)) {
      control_markers.push_back(marker);
      controls.push_back(it->second);
    }
  b.write_as_controls(control_markers);
  std::optional<int32_t> body;
  if (r.grammar) body = grammar::parse_gbnf_into(b, *r.grammar);  // first: its rule names as written
  grammar::JsonGrammar j(b);
  if (!r.grammar) {
    const std::optional<int32_t> document = document_rule(j, r);
    if (tools) {
      int32_t calls;
      try {  // what the family's syntax adds to the parameters' checks above (pythonic's names)
        calls = tool_calls_rule(j, *m.tool_format, functions, max_calls);
      } catch (const GrammarError& e) {
        refuse("tools", "the tools", e);
      }
      if (r.tool_choice == ToolChoice::required) body = calls;
      else if (document) body = b.add_rule("reply", {{GrammarBuilder::ref(*document)}, {GrammarBuilder::ref(calls)}});
      else body = tool_choice_auto_rule(j, *m.tool_format, calls);
    } else {
      body = document;
    }
  }
  if (body) {
    int32_t root = *body;
    if (reasoning_open) {
      // Any thoughts, the closing marker, then the body: after a little white space where it is
      // JSON or calls (Qwen 3 writes "</think>\n\n"); at once where the answer must be a regex's
      // whole match, one of the choices or the grammar's text, as vLLM starts them.
      const std::string& close = m.reasoning->close;
      grammar::ByteSet space;
      space.add(' '), space.add('\n');
      const int32_t gap = b.repeat(b.bytes(space), 0, r.schema || tools ? 4 : 0);
      Sequence thoughts = {GrammarBuilder::ref(b.text_without(close)[0])};
      for (const Element& e : b.literal(close)) thoughts.push_back(e);
      thoughts.insert(thoughts.end(), {GrammarBuilder::ref(gap), GrammarBuilder::ref(*body)});
      root = b.add_rule("root", {std::move(thoughts)});
    }
    try {
      spec.grammar = std::make_shared<grammar::TokenMasks>(b.build(root), m.vocabulary, controls, kMaskCacheBytes);
    } catch (const GrammarError& e) {
      refuse(tools ? "tools" : r.format_field, tools ? "the tools" : constraint_name(r), e);
    }
  }
  if (r.max_reasoning_tokens) {
    grammar::ReasoningBudget budget;
    budget.block = {*m.reasoning, reasoning_open};
    budget.close_ids = m.tokenizer->encode(m.reasoning->close, data::Specials::allowed);
    budget.budget = *r.max_reasoning_tokens;
    spec.reasoning = budget;
  }
  return std::make_shared<grammar::GrammarConstraintSource>(std::move(spec));
}

// Whether a cached constraint's automaton has used half its states or parser stacks: requests of
// a grammar that recurses or repeats keep adding them, so new requests get a fresh one (those
// under way keep theirs) rather than each spilling into an automaton of its own, unshared.
bool worn(const infer::TokenConstraintSource& source) {
  const auto* g = dynamic_cast<const grammar::GrammarConstraintSource*>(&source);
  if (!g || !g->spec().grammar) return false;
  const grammar::Automaton& a = g->spec().grammar->automaton();
  return a.states() > a.limits().max_states / 2 || a.nodes() > a.limits().max_nodes / 2;
}

}  // namespace

std::shared_ptr<const infer::TokenConstraintSource> ConstraintCache::get(const ConstraintModel& m,
                                                                         const OutputRequest& r, bool reasoning_open) {
  if (!r.constrains_text() && !r.parses_tool_calls() && !r.max_reasoning_tokens) return nullptr;
  if (r.parses_tool_calls() && !m.tool_format)
    bad_param("tools", "this model's chat template shows no tool-call format the server knows: start it with "
                       "--tool-parser " + tool_format_names("|"));
  if (r.max_reasoning_tokens && !m.reasoning)
    bad_param("max_reasoning_tokens", "this model's chat template has no reasoning block (<think>...</think>)");
  const std::string key = key_of(r, reasoning_open);
  {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == key) {
        if (worn(*it->second)) {
          entries_.erase(it);
          break;
        }
        entries_.splice(entries_.begin(), entries_, it);
        return it->second;
      }
  }
  auto source = build(m, r, reasoning_open);
  std::lock_guard lock(mutex_);
  entries_.emplace_front(key, source);
  if (entries_.size() > capacity_) entries_.pop_back();
  return source;
}

}  // namespace difftx::serve
