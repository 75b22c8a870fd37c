#include "grammar/automaton.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <queue>

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
  measure_finish_depths();
  for (int32_t alt : grammar_->alternatives(grammar_->root()))
    if (finish_depth_[alt] <= limits_.max_depth) work_.push_back(node(alt, -1));
  std::vector<int32_t> heads;
  bool complete = false;
  close(heads, complete);
  intern(std::move(heads), complete);  // state 0
}

void Automaton::measure_finish_depths() {
  // A reference adds its rule's least depth, plus one where it is not last (its return position
  // stays on the stack). A rule's least depth is its best alternative's, found in increasing order
  // (Knuth's generalisation of Dijkstra's algorithm): an alternative is measured once every rule
  // it refers to is.
  const Grammar& g = *grammar_;
  constexpr int32_t kUnmeasured = INT32_MAX / 2;  // a rule that cannot finish (never reached)
  const auto added = [&g](int32_t p) { return g.at(p + 1).kind == Kind::end ? 0 : 1; };
  std::vector<int32_t> rule_depth(g.rules(), kUnmeasured), alt_rule, alt_start, waiting;
  std::vector<std::vector<int32_t>> users(g.rules());  // per rule: the alternatives that refer to it
  for (int32_t r = 0; r < g.rules(); ++r)
    for (int32_t start : g.alternatives(r)) {
      const auto id = static_cast<int32_t>(alt_start.size());
      alt_rule.push_back(r), alt_start.push_back(start), waiting.push_back(0);
      for (int32_t p = start; g.at(p).kind != Kind::end; ++p)
        if (g.at(p).kind == Kind::rule) users[g.at(p).index].push_back(id), ++waiting[id];
    }
  const auto alternative_depth = [&](int32_t id) {
    int32_t d = 0;
    for (int32_t p = alt_start[id]; g.at(p).kind != Kind::end; ++p)
      if (g.at(p).kind == Kind::rule) d = std::max(d, rule_depth[g.at(p).index] + added(p));
    return d;
  };
  std::priority_queue<std::pair<int32_t, int32_t>, std::vector<std::pair<int32_t, int32_t>>, std::greater<>> ready;
  for (size_t id = 0; id < alt_start.size(); ++id)
    if (waiting[id] == 0) ready.emplace(0, alt_rule[id]);
  while (!ready.empty()) {
    const auto [d, r] = ready.top();
    ready.pop();
    if (rule_depth[r] != kUnmeasured) continue;
    rule_depth[r] = d;
    for (int32_t id : users[r])
      if (--waiting[id] == 0) ready.emplace(alternative_depth(id), alt_rule[id]);
  }
  finish_depth_.assign(g.size(), 0);
  for (auto p = static_cast<int32_t>(g.size()) - 1; p >= 0; --p) {
    const Element& e = g.at(p);
    if (e.kind == Kind::bytes) finish_depth_[p] = finish_depth_[p + 1];
    else if (e.kind == Kind::rule)
      finish_depth_[p] = std::max(finish_depth_[p + 1], std::min(rule_depth[e.index] + added(p), kUnmeasured));
  }
}

int32_t Automaton::node(int32_t position, int32_t parent) {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(position)) << 32) | static_cast<uint32_t>(parent + 1);
  const auto [it, added] = node_index_.emplace(key, static_cast<int32_t>(nodes_.size()));
  if (added) {
    if (static_cast<int64_t>(nodes_.size()) >= limits_.max_nodes) {
      node_index_.erase(it);
      throw AutomatonFull(concat("matching the grammar needs more than ", limits_.max_nodes, " parser stacks"));
    }
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
      // Only alternatives that can finish within max_depth from where they would start.
      const int32_t ret = g.at(nd.position + 1).kind == Kind::end ? nd.parent : node(nd.position + 1, nd.parent);
      const int32_t depth = ret < 0 ? 0 : nodes_[ret].depth + 1;
      for (int32_t alt : g.alternatives(e.index))
        if (depth + finish_depth_[alt] <= limits_.max_depth) work_.push_back(node(alt, ret));
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
      throw AutomatonFull(concat("matching the grammar needs more than ", limits_.max_states, " automaton states"));
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

Automaton::Configuration Automaton::configuration(State s) const {
  std::lock_guard lock(mutex_);
  Configuration c;
  if (s < 0) return c;
  c.complete = states_[s].complete;
  for (int32_t n : states_[s].heads) {
    std::vector<int32_t>& stack = c.stacks.emplace_back();
    for (; n >= 0; n = nodes_[n].parent) stack.push_back(nodes_[n].position);
  }
  return c;
}

Automaton::State Automaton::adopt(const Configuration& c) {
  std::lock_guard lock(mutex_);
  std::vector<int32_t> heads;
  for (const std::vector<int32_t>& stack : c.stacks) {
    int32_t n = -1;
    for (auto p = stack.rbegin(); p != stack.rend(); ++p) {
      DIFFTX_CHECK(*p >= 0 && *p < grammar_->size(), "automaton: position ", *p, " is outside the grammar");
      n = node(*p, n);
    }
    if (n >= 0) heads.push_back(n);
  }
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  return intern(std::move(heads), c.complete);
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

int64_t Automaton::nodes() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(nodes_.size());
}

}  // namespace difftx::grammar
