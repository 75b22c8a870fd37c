#include "grammar/constraint.h"

#include <algorithm>

#include "core/error.h"
#include "grammar/json_grammar.h"

namespace difftx::grammar {
namespace {

// A request whose match fills the grammar's shared automaton goes on in an automaton of its own
// (Automaton::adopt), at most this big (8 MiB of transitions, a 4 MiB mask cache; never bigger
// than the shared one), since every running request may hold one; when it fills, the request
// starts another from where it stands.
constexpr AutomatonLimits kOwnLimits{int64_t{1} << 13, int64_t{1} << 19};
constexpr int64_t kOwnMaskCacheBytes = int64_t{4} << 20;

class Constraint : public infer::TokenConstraint {
 public:
  Constraint(const ConstraintSpec& spec, std::span<const int32_t> stops)
      : spec_(spec), masks_(spec.grammar), stops_(stops.begin(), stops.end()) {
    scratch_.resize(static_cast<size_t>(spec_.vocabulary->words()));
    if (masks_) state_ = masks_->automaton().start();
    if (spec_.reasoning) reasoning_.emplace(spec_.reasoning->block);
  }

  const uint64_t* allowed() override {
    if (forcing()) {
      const int32_t id = spec_.reasoning->close_ids[forced_];
      std::fill(scratch_.begin(), scratch_.end(), 0);
      scratch_[id >> 6] |= uint64_t{1} << (id & 63);
      return scratch_.data();
    }
    if (!masks_) return nullptr;
    mask_ = with_room([&] { return masks_->allowed(state_); });
    if (stops_.empty() || !masks_->automaton().complete(state_)) return mask_->data();
    scratch_ = *mask_;
    for (int32_t id : stops_)
      if (id >= 0 && id < static_cast<int64_t>(scratch_.size()) * 64) scratch_[id >> 6] |= uint64_t{1} << (id & 63);
    return scratch_.data();
  }

  void accept(int32_t id) override {
    if (id < 0 || id >= spec_.vocabulary->size()) fail("token ", id, " is outside the constraint's vocabulary");
    if (masks_) {
      const Automaton::State next = with_room([&] { return masks_->automaton().next(state_, masks_->text_of(id)); });
      if (next < 0) fail("token ", id, " does not continue the output the grammar allows");
      state_ = next;
    }
    if (reasoning_) {  // the tokens inside the block, and those of its forced closing marker
      if (forcing()) ++forced_;
      if (reasoning_->inside()) ++reasoning_tokens_;
      reasoning_->push(spec_.vocabulary->bytes(id));
    }
  }

  bool done() const override {
    if (!masks_ || forcing()) return false;
    const Automaton& a = masks_->automaton();
    return a.complete(state_) && (stops_.empty() || !a.extensible(state_));
  }

  std::unique_ptr<infer::TokenConstraint> clone() const override { return std::make_unique<Constraint>(*this); }

 private:
  bool forcing() const {
    return reasoning_ && reasoning_->inside() && reasoning_tokens_ >= spec_.reasoning->budget &&
           forced_ < static_cast<int64_t>(spec_.reasoning->close_ids.size());
  }

  // f() on the current automaton; where that one is full, once more on a fresh one that holds the
  // current state. A second AutomatonFull (one step needs more than a whole automaton) goes out.
  template <class F>
  auto with_room(F f) -> decltype(f()) {
    try {
      return f();
    } catch (const AutomatonFull&) {
      const AutomatonLimits& now = masks_->automaton().limits();
      const AutomatonLimits limits{std::min(now.max_states, kOwnLimits.max_states),
                                   std::min(now.max_nodes, kOwnLimits.max_nodes), now.max_depth};
      std::shared_ptr<TokenMasks> own = masks_->fresh(kOwnMaskCacheBytes, limits);
      state_ = own->automaton().adopt(masks_->automaton().configuration(state_));
      masks_ = std::move(own);
      return f();
    }
  }

  const ConstraintSpec& spec_;
  std::shared_ptr<TokenMasks> masks_;  // spec_.grammar's, or this request's own once that one filled
  std::vector<int32_t> stops_;
  Automaton::State state_ = 0;
  std::shared_ptr<const TokenMasks::Mask> mask_;
  std::vector<uint64_t> scratch_;
  // The reasoning block through the output's bytes; tokens taken inside it, of them forced.
  std::optional<infer::ReasoningWatch> reasoning_;
  int64_t reasoning_tokens_ = 0, forced_ = 0;
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
