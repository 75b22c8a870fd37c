#include "grammar/constraint.h"

#include <algorithm>

#include "core/error.h"
#include "grammar/json_grammar.h"

namespace difftx::grammar {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

class Constraint : public infer::TokenConstraint {
 public:
  Constraint(const ConstraintSpec& spec, std::span<const int32_t> stops)
      : spec_(spec), stops_(stops.begin(), stops.end()) {
    scratch_.resize(static_cast<size_t>(spec_.vocabulary->words()));
    if (spec_.grammar) state_ = spec_.grammar->automaton().start();
    if (spec_.reasoning) inside_ = spec_.reasoning->open_at_start;
  }

  const uint64_t* allowed() override {
    if (forcing()) {
      const ReasoningBudget& r = *spec_.reasoning;
      const int32_t id = r.close_ids[forced_];
      std::fill(scratch_.begin(), scratch_.end(), 0);
      scratch_[id >> 6] |= uint64_t{1} << (id & 63);
      return scratch_.data();
    }
    if (!spec_.grammar) return nullptr;
    mask_ = spec_.grammar->allowed(state_);
    if (stops_.empty() || !spec_.grammar->automaton().complete(state_)) return mask_->data();
    scratch_ = *mask_;
    for (int32_t id : stops_)
      if (id >= 0 && id < static_cast<int64_t>(scratch_.size()) * 64) scratch_[id >> 6] |= uint64_t{1} << (id & 63);
    return scratch_.data();
  }

  void accept(int32_t id) override {
    if (id < 0 || id >= spec_.vocabulary->size()) fail("token ", id, " is outside the constraint's vocabulary");
    const std::string_view bytes = spec_.vocabulary->bytes(id);
    if (spec_.grammar) {
      const Automaton::State next = spec_.grammar->automaton().next(state_, spec_.grammar->text_of(id));
      if (next < 0) fail("token ", id, " does not continue the output the grammar allows");
      state_ = next;
    }
    if (spec_.reasoning) watch_reasoning(bytes);
  }

  bool done() const override {
    if (!spec_.grammar || forcing()) return false;
    const Automaton& a = spec_.grammar->automaton();
    return a.complete(state_) && (stops_.empty() || !a.extensible(state_));
  }

  std::unique_ptr<infer::TokenConstraint> clone() const override { return std::make_unique<Constraint>(*this); }

 private:
  bool forcing() const {
    return inside_ && spec_.reasoning && reasoning_tokens_ >= spec_.reasoning->budget &&
           forced_ < static_cast<int64_t>(spec_.reasoning->close_ids.size());
  }

  // Follows the reasoning block through the output text: opened by the output's first bytes
  // (unless the prompt opened it), closed by the marker; counts the tokens inside.
  void watch_reasoning(std::string_view bytes) {
    const ReasoningBudget& r = *spec_.reasoning;
    const bool was_forcing = forcing();
    text_ += bytes;
    if (!inside_) {
      if (decided_) return;
      size_t start = 0;
      while (start < text_.size() && is_space(text_[start])) ++start;
      const std::string_view rest = std::string_view(text_).substr(start);
      if (rest.size() < r.open.size()) {
        decided_ = r.open.compare(0, rest.size(), rest) != 0;
        return;
      }
      decided_ = true;
      if (rest.substr(0, r.open.size()) != r.open) return;
      inside_ = true;
      text_ = std::string(rest.substr(r.open.size()));
    } else {
      ++reasoning_tokens_;
      if (was_forcing) ++forced_;
    }
    if (text_.find(r.close) != std::string::npos || forced_ == static_cast<int64_t>(r.close_ids.size())) {
      inside_ = false;
      decided_ = true;
      return;
    }
    if (text_.size() > r.close.size()) text_.erase(0, text_.size() - r.close.size());
  }

  const ConstraintSpec& spec_;
  std::vector<int32_t> stops_;
  Automaton::State state_ = 0;
  std::shared_ptr<const TokenMasks::Mask> mask_;
  std::vector<uint64_t> scratch_;
  // The reasoning block.
  bool inside_ = false, decided_ = false;
  int64_t reasoning_tokens_ = 0, forced_ = 0;
  std::string text_;
};

}  // namespace

GrammarConstraintSource::GrammarConstraintSource(ConstraintSpec spec) : spec_(std::move(spec)) {
  DIFFTX_CHECK(spec_.vocabulary != nullptr, "a token constraint needs the vocabulary");
  DIFFTX_CHECK(!spec_.grammar || &spec_.grammar->vocabulary() == spec_.vocabulary.get(),
               "the grammar's token masks are over another vocabulary");
  if (spec_.reasoning) {
    DIFFTX_CHECK(spec_.reasoning->budget >= 0, "the reasoning budget ", spec_.reasoning->budget,
                 " must not be negative");
    DIFFTX_CHECK(!spec_.reasoning->close_ids.empty(), "the reasoning block's closing marker has no tokens");
    for (int32_t id : spec_.reasoning->close_ids)
      DIFFTX_CHECK(id >= 0 && id < spec_.vocabulary->size(), "the closing marker's token ", id,
                   " is outside the vocabulary");
  }
}

std::unique_ptr<infer::TokenConstraint> GrammarConstraintSource::start(std::span<const int32_t> stop_tokens) const {
  return std::make_unique<Constraint>(spec_, stop_tokens);
}

std::shared_ptr<const GrammarConstraintSource> json_schema_constraint(
    const nlohmann::ordered_json& schema, std::shared_ptr<const TokenVocabulary> vocabulary) {
  ConstraintSpec spec;
  try {
    spec.grammar = std::make_shared<TokenMasks>(json_schema_grammar(schema), vocabulary);
  } catch (const GrammarError& e) {
    fail("the JSON Schema cannot be enforced at ", e.where.empty() ? "#" : e.where, ": ", e.what());
  }
  spec.vocabulary = std::move(vocabulary);
  return std::make_shared<GrammarConstraintSource>(std::move(spec));
}

}  // namespace difftx::grammar
