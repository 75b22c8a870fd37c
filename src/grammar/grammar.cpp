#include "grammar/grammar.h"

#include <algorithm>
#include <deque>

namespace difftx::grammar {

GrammarError::GrammarError(std::string where_, const std::string& message) : Error(message), where(std::move(where_)) {}

namespace {

bool is_rule(const Element& e) { return e.kind == Element::Kind::rule; }

// An element as one number, for memo keys: rules >= 0, byte sets < 0.
int64_t item_key(const Element& e) { return is_rule(e) ? e.index : -1 - int64_t{e.index}; }

void split_utf8(uint32_t lo, uint32_t hi, std::vector<std::vector<std::pair<uint8_t, uint8_t>>>& out) {
  if (lo > hi) return;
  if (lo <= 0xDFFF && hi >= 0xD800) {  // no surrogates
    if (lo < 0xD800) split_utf8(lo, 0xD7FF, out);
    if (hi > 0xDFFF) split_utf8(0xE000, hi, out);
    return;
  }
  for (uint32_t top : {0x7Fu, 0x7FFu, 0xFFFFu})
    if (lo <= top && hi > top) {
      split_utf8(lo, top, out);
      split_utf8(top + 1, hi, out);
      return;
    }
  const int n = hi <= 0x7F ? 1 : hi <= 0x7FF ? 2 : hi <= 0xFFFF ? 3 : 4;
  // Split until every continuation byte spans its full range below the first byte that differs.
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (uint32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_utf8(lo, lo | m, out);
        split_utf8((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_utf8(lo, (hi & ~m) - 1, out);
        split_utf8(hi & ~m, hi, out);
        return;
      }
    }
  }
  const auto encode = [n](uint32_t c, uint8_t* b) {
    if (n == 1) {
      b[0] = static_cast<uint8_t>(c);
      return;
    }
    static constexpr uint8_t lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (int i = n - 1; i > 0; --i, c >>= 6) b[i] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    b[0] = static_cast<uint8_t>(lead[n] | c);
  };
  uint8_t a[4], b[4];
  encode(lo, a);
  encode(hi, b);
  std::vector<std::pair<uint8_t, uint8_t>> seq;
  for (int i = 0; i < n; ++i) seq.emplace_back(a[i], b[i]);
  out.push_back(std::move(seq));
}

std::string escape_byte(uint8_t b, std::string_view specials) {
  static const char* hex = "0123456789abcdef";
  if (b >= 0x20 && b < 0x7F) {
    if (specials.find(static_cast<char>(b)) != std::string_view::npos) return std::string{'\\', static_cast<char>(b)};
    return std::string(1, static_cast<char>(b));
  }
  if (b == '\n') return "\\n";
  if (b == '\t') return "\\t";
  if (b == '\r') return "\\r";
  return std::string("\\x") + hex[b >> 4] + hex[b & 15];
}

}  // namespace

CodePointRanges complement(CodePointRanges ranges) {
  std::sort(ranges.begin(), ranges.end());
  CodePointRanges out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : ranges) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = std::max(next, hi + 1);
  }
  if (next <= 0x10FFFF) out.emplace_back(next, 0x10FFFF);
  return out;
}

std::vector<std::vector<std::pair<uint8_t, uint8_t>>> utf8_sequences(const CodePointRanges& ranges) {
  std::vector<std::vector<std::pair<uint8_t, uint8_t>>> out;
  for (const auto& [lo, hi] : ranges) split_utf8(lo, std::min<uint32_t>(hi, 0x10FFFF), out);
  return out;
}

GrammarBuilder::GrammarBuilder(GrammarLimits limits) : limits_(limits) {}

void GrammarBuilder::count(int64_t elements) {
  elements_ += elements;
  if (elements_ > limits_.max_elements)
    throw GrammarError("", concat("the grammar grows beyond ", limits_.max_elements, " elements"));
}

int32_t GrammarBuilder::add_rule(std::string_view name) {
  if (static_cast<int64_t>(names_.size()) >= limits_.max_rules)
    throw GrammarError("", concat("the grammar grows beyond ", limits_.max_rules, " rules"));
  std::string unique(name);
  if (by_name_.count(unique)) {  // name-1, name-2, ...: the next suffix remembered, not searched from 1
    int64_t& suffix = suffixes_[unique];
    do unique = concat(name, "-", ++suffix);
    while (by_name_.count(unique));
  }
  const auto id = static_cast<int32_t>(names_.size());
  names_.push_back(unique);
  by_name_.emplace(std::move(unique), id);
  alternatives_.emplace_back();
  return id;
}

int32_t GrammarBuilder::named_rule(std::string_view name) {
  const auto it = by_name_.find(name);
  return it != by_name_.end() ? it->second : add_rule(name);
}

int32_t GrammarBuilder::add_rule(std::string_view name, std::vector<Sequence> alternatives) {
  const int32_t r = add_rule(name);
  for (Sequence& s : alternatives) add_alternative(r, std::move(s));
  return r;
}

void GrammarBuilder::add_alternative(int32_t rule, Sequence sequence) {
  count(static_cast<int64_t>(sequence.size()) + 1);
  alternatives_.at(rule).push_back(std::move(sequence));
}

Element GrammarBuilder::bytes(const ByteSet& set) {
  const auto [it, added] = set_index_.emplace(set.words, static_cast<int32_t>(sets_.size()));
  if (added) sets_.push_back(set);
  return {Element::Kind::bytes, it->second};
}

Sequence GrammarBuilder::literal(std::string_view text) {
  Sequence s;
  for (size_t i = 0; i < text.size();) {
    size_t control = controls_.size();  // the longest marker from i
    for (size_t k = 0; k < controls_.size(); ++k)
      if (text.substr(i).starts_with(controls_[k]) &&
          (control == controls_.size() || controls_[k].size() > controls_[control].size()))
        control = k;
    if (control == controls_.size()) {
      s.push_back(bytes(ByteSet::of(static_cast<uint8_t>(text[i++]))));
      continue;
    }
    if (control_rules_[control] < 0) {
      Sequence marker;
      for (char c : controls_[control]) marker.push_back(bytes(ByteSet::of(static_cast<uint8_t>(c))));
      control_rules_[control] = add_rule(
          "control", {std::move(marker), {bytes(ByteSet::of(static_cast<uint8_t>(kFirstControlByte + control)))}});
    }
    s.push_back(ref(control_rules_[control]));
    i += controls_[control].size();
  }
  return s;
}

void GrammarBuilder::write_as_controls(std::vector<std::string> markers) {
  if (static_cast<int>(markers.size()) > kMaxControls)
    throw GrammarError("", concat(markers.size(), " control markers; a grammar writes at most ", kMaxControls));
  for (const std::string& m : markers)
    if (m.empty()) throw GrammarError("", "an empty control marker");
  controls_ = std::move(markers);
  control_rules_.assign(controls_.size(), -1);
}

int32_t GrammarBuilder::repeat(Element item, int64_t min, int64_t max) {
  if (min < 0 || (max >= 0 && max < min))
    throw GrammarError("", concat("a repetition {", min, ",", max, "} must have 0 <= min <= max"));
  if (min > limits_.max_repeat || max > limits_.max_repeat)
    throw GrammarError("",
                       concat("a repetition of ", std::max(min, max), " exceeds the limit of ", limits_.max_repeat));
  const int64_t key = item_key(item);
  Element tail{Element::Kind::end, 0};  // none
  if (max < 0) {
    auto it = stars_.find(key);
    if (it == stars_.end()) {
      const int32_t star = add_rule("star");
      add_alternative(star, {item, ref(star)});
      add_alternative(star, {});
      it = stars_.emplace(key, star).first;
    }
    tail = ref(it->second);
  } else if (max > min) {
    // item{0,k} ::= item item{0,k-1} | ""
    int32_t below = -1;
    for (int64_t j = 1; j <= max - min; ++j) {
      const auto it = tails_.find({key, j});
      if (it != tails_.end()) {
        below = it->second;
        continue;
      }
      const int32_t r = add_rule("upto");
      add_alternative(r, below < 0 ? Sequence{item} : Sequence{item, ref(below)});
      add_alternative(r, {});
      tails_.emplace(std::make_pair(key, j), r);
      below = r;
    }
    tail = ref(below);
  }
  Sequence body(static_cast<size_t>(min), item);
  if (tail.kind != Element::Kind::end) body.push_back(tail);
  return add_rule("repeat", {std::move(body)});
}

namespace {

// The automaton of texts in which none of the markers occurs (Aho-Corasick): node s of the
// markers' trie stands for the longest end of the text that begins a marker (the root: none);
// next[s][b] is the node after byte b, or -1 where b would end a marker. Of one marker, node k
// is its first k bytes.
struct MarkerAutomaton {
  std::vector<std::array<int32_t, 256>> next;
  std::vector<bool> ends;  // a marker ends at the node (or at an end of it): never entered
};

MarkerAutomaton marker_automaton(const std::vector<std::string_view>& markers) {
  if (markers.empty()) throw GrammarError("", "text_without: no markers");
  std::array<int32_t, 256> none;
  none.fill(-1);
  MarkerAutomaton a{{none}, {false}};
  for (std::string_view m : markers) {
    if (m.empty()) throw GrammarError("", "text_without: an empty marker");
    int32_t s = 0;
    for (const char c : m) {
      if (a.next[s][static_cast<uint8_t>(c)] < 0) {
        a.next[s][static_cast<uint8_t>(c)] = static_cast<int32_t>(a.next.size());
        a.next.push_back(none);
        a.ends.push_back(false);
      }
      s = a.next[s][static_cast<uint8_t>(c)];
    }
    a.ends[s] = true;
  }
  // Breadth first: a node's row holds its trie children until the node is reached; its failure
  // node (its longest proper end in the trie) is shallower, its row complete by then.
  std::vector<int32_t> fail(a.next.size(), 0), order = {0};
  for (size_t k = 0; k < order.size(); ++k) {
    const int32_t s = order[k];
    for (int b = 0; b < 256; ++b) {
      const int32_t via_fail = s == 0 ? 0 : a.next[fail[s]][b];
      int32_t& to = a.next[s][b];
      if (to < 0) {
        to = via_fail;
        continue;
      }
      fail[to] = via_fail;
      a.ends[to] = a.ends[to] || a.ends[via_fail];
      order.push_back(to);
    }
  }
  for (auto& row : a.next)
    for (int32_t& to : row)
      if (a.ends[to]) to = -1;
  return a;
}

// Rule s matches the rest of a text at node s of `a` (-1 for the nodes never entered): any bytes
// that never end a marker.
std::vector<int32_t> state_rules(GrammarBuilder& g, const MarkerAutomaton& a) {
  std::vector<int32_t> rules(a.next.size(), -1);
  for (size_t s = 0; s < rules.size(); ++s)
    if (!a.ends[s]) rules[s] = g.add_rule("text");
  for (size_t s = 0; s < rules.size(); ++s) {
    if (a.ends[s]) continue;
    g.add_alternative(rules[s], {});
    std::vector<ByteSet> to(rules.size());
    for (int b = 0; b < kFirstControlByte; ++b)
      if (const int32_t j = a.next[s][b]; j >= 0) to[j].add(static_cast<uint8_t>(b));
    for (size_t j = 0; j < rules.size(); ++j)
      if (!to[j].empty()) g.add_alternative(rules[s], {g.bytes(to[j]), GrammarBuilder::ref(rules[j])});
  }
  return rules;
}

}  // namespace

std::vector<int32_t> GrammarBuilder::text_without(std::string_view marker) {
  std::vector<int32_t> rules = state_rules(*this, marker_automaton({marker}));
  rules.pop_back();  // the whole marker's node, never entered
  return rules;
}

int32_t GrammarBuilder::text_without(const std::vector<std::string_view>& markers, const ByteSet& first) {
  const MarkerAutomaton a = marker_automaton(markers);
  const std::vector<int32_t> rules = state_rules(*this, a);
  const int32_t start = add_rule("text-start");
  add_alternative(start, {});
  std::vector<ByteSet> to(rules.size());
  for (int b = 0; b < kFirstControlByte; ++b)
    if (const int32_t j = a.next[0][b]; j >= 0 && first.has(static_cast<uint8_t>(b)))
      to[j].add(static_cast<uint8_t>(b));
  for (size_t j = 0; j < rules.size(); ++j)
    if (!to[j].empty()) add_alternative(start, {bytes(to[j]), ref(rules[j])});
  return start;
}

int32_t GrammarBuilder::code_points(std::string_view name, const CodePointRanges& ranges) {
  const int32_t r = add_rule(name);
  for (const auto& seq : utf8_sequences(ranges)) {
    Sequence s;
    for (const auto& [lo, hi] : seq) s.push_back(bytes(ByteSet::range(lo, hi)));
    add_alternative(r, std::move(s));
  }
  return r;
}

std::shared_ptr<const Grammar> GrammarBuilder::build(int32_t root) const {
  const auto R = static_cast<int32_t>(names_.size());
  if (root < 0 || root >= R) throw GrammarError("", "the grammar has no root rule");
  // Reachable rules; every one must be defined.
  const auto reachable_from = [&](const std::vector<std::vector<bool>>* dead) {
    std::vector<bool> seen(R, false);
    std::vector<int32_t> todo = {root};
    seen[root] = true;
    while (!todo.empty()) {
      const int32_t r = todo.back();
      todo.pop_back();
      for (size_t a = 0; a < alternatives_[r].size(); ++a) {
        if (dead && (*dead)[r][a]) continue;
        for (const Element& e : alternatives_[r][a])
          if (is_rule(e) && !seen[e.index]) seen[e.index] = true, todo.push_back(e.index);
      }
    }
    return seen;
  };
  const std::vector<bool> reachable = reachable_from(nullptr);
  for (int32_t r = 0; r < R; ++r)
    if (reachable[r] && alternatives_[r].empty()) throw GrammarError("", "rule '" + names_[r] + "' is not defined");

  // Productive rules (those that can finish), by counting each alternative's pending references.
  std::vector<bool> productive(R, false);
  std::vector<std::vector<std::pair<int32_t, int32_t>>> uses(R);  // rule -> (rule, alternative) using it
  std::vector<std::vector<int32_t>> pending(R);
  std::deque<int32_t> ready;
  const auto mark = [&](int32_t r) {
    if (!productive[r]) productive[r] = true, ready.push_back(r);
  };
  for (int32_t r = 0; r < R; ++r) {
    if (!reachable[r]) continue;
    pending[r].assign(alternatives_[r].size(), 0);
    for (size_t a = 0; a < alternatives_[r].size(); ++a) {
      int32_t& p = pending[r][a];
      for (const Element& e : alternatives_[r][a]) {
        if (is_rule(e)) ++p, uses[e.index].emplace_back(r, static_cast<int32_t>(a));
        else if (sets_[e.index].empty()) p = INT32_MIN / 2;  // never finishes
      }
      if (p == 0) mark(r);
    }
  }
  while (!ready.empty()) {
    const int32_t s = ready.front();
    ready.pop_front();
    for (const auto& [r, a] : uses[s])
      if (--pending[r][a] == 0) mark(r);
  }
  if (!productive[root])
    throw GrammarError("", "the grammar matches no text: rule '" + names_[root] + "' never finishes");
  std::vector<std::vector<bool>> dead(R);
  for (int32_t r = 0; r < R; ++r) {
    dead[r].assign(alternatives_[r].size(), false);
    if (!reachable[r]) continue;
    for (size_t a = 0; a < alternatives_[r].size(); ++a)
      for (const Element& e : alternatives_[r][a])
        if ((is_rule(e) && !productive[e.index]) || (!is_rule(e) && sets_[e.index].empty())) dead[r][a] = true;
  }
  const std::vector<bool> live = reachable_from(&dead);

  // Nullable rules, the same way; then left recursion: a rule reached again before any byte.
  std::vector<bool> nullable(R, false);
  std::vector<std::vector<int32_t>> non_null(R);
  std::vector<std::vector<std::pair<int32_t, int32_t>>> rule_uses(R);
  for (int32_t r = 0; r < R; ++r) {
    if (!live[r]) continue;
    non_null[r].assign(alternatives_[r].size(), 0);
    for (size_t a = 0; a < alternatives_[r].size(); ++a) {
      if (dead[r][a]) continue;
      int32_t& p = non_null[r][a];
      for (const Element& e : alternatives_[r][a]) {
        if (is_rule(e)) ++p, rule_uses[e.index].emplace_back(r, static_cast<int32_t>(a));
        else p = INT32_MIN / 2;
      }
      if (p == 0 && !nullable[r]) nullable[r] = true, ready.push_back(r);
    }
  }
  while (!ready.empty()) {
    const int32_t s = ready.front();
    ready.pop_front();
    for (const auto& [r, a] : rule_uses[s])
      if (!dead[r][a] && --non_null[r][a] == 0 && !nullable[r]) nullable[r] = true, ready.push_back(r);
  }
  std::vector<std::vector<int32_t>> left(R);  // r -> rules that can start r
  for (int32_t r = 0; r < R; ++r) {
    if (!live[r]) continue;
    for (size_t a = 0; a < alternatives_[r].size(); ++a) {
      if (dead[r][a]) continue;
      for (const Element& e : alternatives_[r][a]) {
        if (!is_rule(e)) break;
        left[r].push_back(e.index);
        if (!nullable[e.index]) break;
      }
    }
  }
  std::vector<uint8_t> color(R, 0);  // 0 new, 1 on the path, 2 done
  for (int32_t start = 0; start < R; ++start) {
    if (!live[start] || color[start]) continue;
    std::vector<std::pair<int32_t, size_t>> path = {{start, 0}};
    color[start] = 1;
    while (!path.empty()) {
      auto& [r, i] = path.back();
      if (i == left[r].size()) {
        color[r] = 2;
        path.pop_back();
        continue;
      }
      const int32_t s = left[r][i++];
      if (color[s] == 1) {
        std::string cycle;
        bool on = false, repetition = false;  // through a repeat()'s "star" rule
        for (const auto& [p, _] : path) {
          on = on || p == s;
          if (on) cycle += names_[p] + " -> ";
          repetition = repetition || (on && (names_[p] == "star" || names_[p].starts_with("star-")));
        }
        throw GrammarError("", "the grammar is left-recursive: " + cycle + names_[s] +
                                   (repetition ? " (an unbounded repetition of a part that may match no text, as "
                                                 "in (x?)* or (a*)*: repeat a part that matches at least one byte)"
                                               : " (a rule may only recur after matching at least one byte)"));
      }
      if (color[s] == 0) color[s] = 1, path.emplace_back(s, 0);
    }
  }

  // Flat layout of the live rules.
  auto g = std::make_shared<Grammar>();
  std::vector<int32_t> renumber(R, -1);
  for (int32_t r = 0; r < R; ++r)
    if (live[r]) renumber[r] = static_cast<int32_t>(g->names_.size()), g->names_.push_back(names_[r]);
  g->sets_ = sets_;
  g->alt_offsets_.push_back(0);
  for (int32_t r = 0; r < R; ++r) {
    if (!live[r]) continue;
    for (size_t a = 0; a < alternatives_[r].size(); ++a) {
      if (dead[r][a]) continue;
      g->alt_starts_.push_back(static_cast<int32_t>(g->elements_.size()));
      for (Element e : alternatives_[r][a]) {
        if (is_rule(e)) e.index = renumber[e.index];
        g->elements_.push_back(e);
      }
      g->elements_.push_back({Element::Kind::end, 0});
    }
    g->alt_offsets_.push_back(static_cast<int32_t>(g->alt_starts_.size()));
  }
  g->root_ = renumber[root];
  return g;
}

std::string Grammar::to_gbnf() const {
  std::string out;
  const auto set_text = [&](const ByteSet& s) {
    std::string t;
    if (s.count() == 1)
      for (int b = 0; b < 256; ++b)
        if (s.has(static_cast<uint8_t>(b)))
          return t.append("\"").append(escape_byte(static_cast<uint8_t>(b), "\"\\")).append("\"");
    t = "[";
    for (int b = 0; b < 256;) {
      if (!s.has(static_cast<uint8_t>(b))) {
        ++b;
        continue;
      }
      int e = b;
      while (e + 1 < 256 && s.has(static_cast<uint8_t>(e + 1))) ++e;
      t += escape_byte(static_cast<uint8_t>(b), "]\\-^");
      if (e > b) t.append("-").append(escape_byte(static_cast<uint8_t>(e), "]\\-^"));
      b = e + 1;
    }
    return t + "]";
  };
  for (int32_t i = 0; i < rules(); ++i) {  // the root first: GBNF's root is its first rule
    const int32_t r = i == 0 ? root_ : i <= root_ ? i - 1 : i;
    out += name(r) + " ::=";
    bool first = true;
    for (int32_t p : alternatives(r)) {
      out += first ? " " : " | ";
      first = false;
      if (at(p).kind == Element::Kind::end) out += "\"\"";
      for (bool space = false; at(p).kind != Element::Kind::end; ++p, space = true) {
        if (space) out += " ";
        out += at(p).kind == Element::Kind::rule ? name(at(p).index) : set_text(set(at(p).index));
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace difftx::grammar
