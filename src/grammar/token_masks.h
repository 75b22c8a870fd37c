// Which tokens keep a grammar's output a prefix of some document: for each automaton state, the
// text tokens whose bytes the automaton takes from there to a live state (a walk of the
// vocabulary's trie, token_vocabulary.h), plus the control tokens the grammar has where it is (each
// as its control byte, grammar.h). Masks
// are remembered per state and shared by every request of the grammar, so a state seen before
// costs a lookup; the memory they take is bounded (all are dropped when it is exceeded).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/automaton.h"
#include "grammar/token_vocabulary.h"

namespace difftx::grammar {

class TokenMasks {
 public:
  using Mask = std::vector<uint64_t>;
  // `controls`: the control tokens the grammar writes, controls[i] as the byte kFirstControlByte + i
  // (GrammarBuilder::write_as_controls: a tool-call marker that is a special token).
  TokenMasks(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
             std::vector<int32_t> controls = {}, int64_t max_cache_bytes = int64_t{256} << 20,
             AutomatonLimits limits = {});

  // Another TokenMasks of the same grammar, vocabulary and controls, with an empty automaton and
  // cache (at most max_cache_bytes) and these limits: where a request goes on once this one's
  // automaton is full.
  std::shared_ptr<TokenMasks> fresh(int64_t max_cache_bytes, AutomatonLimits limits) const;

  Automaton& automaton() { return automaton_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  // The tokens allowed in state s (not the stop tokens: the constraint adds those).
  std::shared_ptr<const Mask> allowed(Automaton::State s);
  // What the automaton reads for token id: its control byte, or its bytes.
  std::string_view text_of(int32_t id) const;

 private:
  Automaton automaton_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  std::vector<int32_t> controls_;
  std::string control_bytes_;  // controls_[i]'s at i
  int64_t max_cache_bytes_;
  std::mutex mutex_;
  std::map<Automaton::State, std::shared_ptr<const Mask>> cache_;
};

}  // namespace difftx::grammar
