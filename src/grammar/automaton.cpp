#include "grammar/automaton.h"

#include <algorithm>

#include "core/hash.h"

namespace difftx::grammar {

namespace {
constexpr Automaton::State kUnknown = -2;
using Kind = Element::Kind;
}  // namespace

size_t Automaton::HeadsHash::operator()(const std::vector<int32_t>& v) const {
  return hash64(v.data(), v.size() * sizeof(int32_t));
}

Automaton::Automaton(std::shared_ptr<const Grammar> grammar, AutomatonLimits limits)
    : grammar_(std::move(grammar)), limits_(limits) {
  for (int32_t alt : grammar_->alternatives(grammar_->root())) work_.push_back(node(alt, -1));
  std::vector<int32_t> heads;
  bool complete = false;
  close(heads, complete);
  intern(std::move(heads), complete);  // state 0
}

int32_t Automaton::node(int32_t position, int32_t parent) {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(position)) << 32) | static_cast<uint32_t>(parent + 1);
  const auto [it, added] = node_index_.emplace(key, static_cast<int32_t>(nodes_.size()));
  if (added) {
    if (static_cast<int64_t>(nodes_.size()) >= limits_.max_nodes)
      throw GrammarError("", concat("matching the grammar needs more than ", limits_.max_nodes, " parser stacks"));
    nodes_.push_back({position, parent, parent < 0 ? 0 : nodes_[parent].depth + 1});
    seen_.push_back(0);
  }
  return it->second;
}

void Automaton::close(std::vector<int32_t>& heads, bool& complete) {
  const Grammar& g = *grammar_;
  ++epoch_;
  while (!work_.empty()) {
    const int32_t n = work_.back();
    work_.pop_back();
    if (seen_[n] == epoch_) continue;
    seen_[n] = epoch_;
    const Node nd = nodes_[n];
    const Element& e = g.at(nd.position);
    if (e.kind == Kind::bytes) {
      heads.push_back(n);
    } else if (e.kind == Kind::end) {
      if (nd.parent < 0) complete = true;
      else work_.push_back(nd.parent);
    } else {
      // A reference last in its alternative returns straight to the parent (a tail call).
      const int32_t ret = g.at(nd.position + 1).kind == Kind::end ? nd.parent : node(nd.position + 1, nd.parent);
      if (ret >= 0 && nodes_[ret].depth >= limits_.max_depth) continue;
      for (int32_t alt : g.alternatives(e.index)) work_.push_back(node(alt, ret));
    }
  }
  std::sort(heads.begin(), heads.end());
}

Automaton::State Automaton::intern(std::vector<int32_t> heads, bool complete) {
  if (heads.empty() && !complete) return kDead;
  std::vector<int32_t> key = heads;
  key.push_back(complete ? -1 : -2);
  const auto [it, added] = state_index_.emplace(std::move(key), static_cast<State>(states_.size()));
  if (added) {
    if (static_cast<int64_t>(states_.size()) >= limits_.max_states) {
      state_index_.erase(it);
      throw GrammarError("", concat("matching the grammar needs more than ", limits_.max_states, " automaton states"));
    }
    states_.push_back({std::move(heads), complete});
    transitions_.resize(transitions_.size() + 256, kUnknown);
  }
  return it->second;
}

Automaton::State Automaton::step(State s, uint8_t byte) {
  if (s < 0) return kDead;
  const size_t slot = static_cast<size_t>(s) * 256 + byte;
  if (transitions_[slot] != kUnknown) return transitions_[slot];
  const Grammar& g = *grammar_;
  work_.clear();  // what a closure that threw left
  for (int32_t h : states_[s].heads) {
    const Node nd = nodes_[h];
    if (g.set(g.at(nd.position).index).has(byte)) work_.push_back(node(nd.position + 1, nd.parent));
  }
  std::vector<int32_t> heads;
  bool complete = false;
  close(heads, complete);
  const State to = intern(std::move(heads), complete);
  transitions_[slot] = to;
  return to;
}

Automaton::State Automaton::next(State s, uint8_t byte) {
  std::lock_guard lock(mutex_);
  return step(s, byte);
}

Automaton::State Automaton::next(State s, std::string_view bytes) {
  std::lock_guard lock(mutex_);
  for (char c : bytes) {
    s = step(s, static_cast<uint8_t>(c));
    if (s < 0) break;
  }
  return s;
}

bool Automaton::complete(State s) const {
  std::lock_guard lock(mutex_);
  return s >= 0 && states_[s].complete;
}

bool Automaton::extensible(State s) const {
  std::lock_guard lock(mutex_);
  return s >= 0 && !states_[s].heads.empty();
}

int64_t Automaton::states() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(states_.size());
}

}  // namespace difftx::grammar
