// A grammar's recognizer over bytes, built lazily as a DFA. The pushdown parser's configuration
// after some bytes is a set of stacks (positions to return to, grammar.h); stacks share their
// tails as a tree of interned nodes (position, parent), and each distinct set of stacks is one
// state. A transition on a byte is computed once (advance every stack whose next element takes
// the byte, then expand rule references until each stack waits on a byte set) and remembered,
// so matching the same kind of text twice - every character of a long string, every document
// of the same schema - costs a table lookup. A state is complete when some stack has finished
// the root rule.
//
// Bounded: a stack is kept only where the rest of every rule on it can finish within max_depth
// (nesting deeper than that is refused before its opening byte, so every live state can still
// complete), and more states or nodes than the limits is an AutomatonFull error. A match that
// fills one automaton goes on in a fresh one from where it stood (configuration, adopt).
// Thread-safe (one mutex): automata are shared by the requests of the same grammar.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace difftx::grammar {

// More states or parser stacks than AutomatonLimits allow: the automaton is full, not the grammar
// wrong; a fresh automaton can take over from a state (Automaton::adopt).
struct AutomatonFull : GrammarError {
  explicit AutomatonFull(const std::string& message) : GrammarError("", message) {}
};

struct AutomatonLimits {
  int64_t max_states = int64_t{1} << 16;  // each holds a 1 KiB transition table
  int64_t max_nodes = int64_t{1} << 22;
  int32_t max_depth = 1024;  // rule nesting on one stack
};

class Automaton {
 public:
  using State = int32_t;
  static constexpr State kDead = -1;

  explicit Automaton(std::shared_ptr<const Grammar> grammar, AutomatonLimits limits = {});
  Automaton(const Automaton&) = delete;
  Automaton& operator=(const Automaton&) = delete;

  State start() const { return 0; }
  State next(State s, uint8_t byte);
  State next(State s, std::string_view bytes);  // kDead as soon as a byte is refused
  bool complete(State s) const;    // the bytes so far are a whole document
  bool extensible(State s) const;  // some byte may follow
  int64_t states() const;
  int64_t nodes() const;  // parser stacks made so far
  const Grammar& grammar() const { return *grammar_; }
  const std::shared_ptr<const Grammar>& shared_grammar() const { return grammar_; }
  const AutomatonLimits& limits() const { return limits_; }

  // State s as plain data: each stack's positions from its head down, and whether s is complete.
  struct Configuration {
    std::vector<std::vector<int32_t>> stacks;
    bool complete = false;
  };
  Configuration configuration(State s) const;
  // The state of this automaton that holds a configuration of another automaton of the same
  // grammar: matching goes on from there as it would have in the other.
  State adopt(const Configuration& c);

  // Calls f(step) with the automaton locked, where step(state, byte) is next() without the lock:
  // for walks over many transitions (token masks).
  template <class F>
  auto locked(F&& f) {
    std::lock_guard lock(mutex_);
    return f([this](State s, uint8_t b) { return step(s, b); });
  }

 private:
  struct Node {
    int32_t position, parent, depth;
  };
  struct Info {
    std::vector<int32_t> heads;  // nodes whose next element is a byte set, sorted
    bool complete = false;
  };
  struct HeadsHash {
    size_t operator()(const std::vector<int32_t>& v) const;
  };

  // finish_depth_: per position, the least nesting below it that finishes its alternative.
  void measure_finish_depths();
  State step(State s, uint8_t byte);
  int32_t node(int32_t position, int32_t parent);
  // Expands work_ until every stack waits on a byte set: the heads and whether one finished.
  void close(std::vector<int32_t>& heads, bool& complete);
  State intern(std::vector<int32_t> heads, bool complete);

  std::shared_ptr<const Grammar> grammar_;
  AutomatonLimits limits_;
  mutable std::mutex mutex_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, int32_t> node_index_;
  std::vector<Info> states_;
  std::unordered_map<std::vector<int32_t>, State, HeadsHash> state_index_;  // heads + [complete] -> state
  std::vector<State> transitions_;  // 256 per state; kUnknown until computed
  std::vector<int32_t> finish_depth_;
  std::vector<int32_t> work_;
  std::vector<uint32_t> seen_;  // per node: the closure that last visited it
  uint32_t epoch_ = 0;
};

}  // namespace difftx::grammar
