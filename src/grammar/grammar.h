// A context-free grammar over bytes, GBNF-like: named rules, each a list of alternatives, each
// alternative a sequence of byte sets and references to rules. The JSON Schema compiler, the
// regex compiler and the GBNF parser all build one through GrammarBuilder, which checks it
// (every rule defined, no left recursion, every alternative able to finish, sizes bounded) and
// lays it out flat for the matcher (automaton.h): position p of elements() is "the next element
// to match", and every alternative ends with an `end` element.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "grammar/byte_set.h"

namespace difftx::grammar {

// What a grammar cannot be: `where` names the place at fault (a JSON Schema path such as
// "#/properties/date/format", a regex's "pattern", a GBNF line), for the 400 a server answers.
struct GrammarError : Error {
  GrammarError(std::string where_, const std::string& message);
  std::string where;
};

// Sizes a grammar may reach: a hostile schema or grammar is an error, never a hang or a
// machine's worth of memory.
struct GrammarLimits {
  int64_t max_elements = int64_t{1} << 20;  // elements over all alternatives
  int64_t max_rules = int64_t{1} << 18;
  int64_t max_repeat = 10000;              // the largest bounded repetition count ({m,n}, maxLength, ...)
};

struct Element {
  enum class Kind : uint8_t { bytes, rule, end };
  Kind kind = Kind::end;
  int32_t index = 0;  // bytes: into sets(); rule: the rule
  bool operator==(const Element&) const = default;
};
using Sequence = std::vector<Element>;

class Grammar {
 public:
  int32_t root() const { return root_; }
  int32_t rules() const { return static_cast<int32_t>(names_.size()); }
  const std::string& name(int32_t rule) const { return names_[rule]; }
  // The positions where the rule's alternatives start.
  std::span<const int32_t> alternatives(int32_t rule) const {
    return {alt_starts_.data() + alt_offsets_[rule], alt_starts_.data() + alt_offsets_[rule + 1]};
  }
  const Element& at(int32_t position) const { return elements_[position]; }
  const ByteSet& set(int32_t index) const { return sets_[index]; }
  int64_t size() const { return static_cast<int64_t>(elements_.size()); }
  // GBNF text of the grammar, for error messages, tests and debugging. Bytes above 0x7F print as
  // \xNN, which GBNF reads as code points: gbnf.h reads the text back as the same language where
  // the grammar's byte sets are ASCII.
  std::string to_gbnf() const;

 private:
  friend class GrammarBuilder;
  std::vector<Element> elements_;
  std::vector<ByteSet> sets_;
  std::vector<int32_t> alt_offsets_;  // rule r's alternatives: alt_starts_[alt_offsets_[r], alt_offsets_[r + 1])
  std::vector<int32_t> alt_starts_;
  std::vector<std::string> names_;
  int32_t root_ = 0;
};

// Code point ranges [first, second], inclusive.
using CodePointRanges = std::vector<std::pair<uint32_t, uint32_t>>;

// Control tokens (special tokens such as a tool-call marker) are written in a grammar as one byte
// each that never occurs in UTF-8 text: 0xF5 for the first, 0xF6 for the next, up to 0xFF. Text
// (free text, strings, code points) never holds these bytes, so a control token is allowed only
// where the grammar has its marker (GrammarBuilder::write_as_controls), never inside a string.
inline constexpr int kFirstControlByte = 0xF5;
inline constexpr int kMaxControls = 256 - kFirstControlByte;

class GrammarBuilder {
 public:
  explicit GrammarBuilder(GrammarLimits limits = {});

  // A new rule without alternatives yet; the name is made unique with a suffix where taken.
  int32_t add_rule(std::string_view name);
  // The rule of this exact name, declared on first use (GBNF's names).
  int32_t named_rule(std::string_view name);
  // A new rule with these alternatives.
  int32_t add_rule(std::string_view name, std::vector<Sequence> alternatives);
  void add_alternative(int32_t rule, Sequence sequence);
  bool has_alternatives(int32_t rule) const { return !alternatives_[rule].empty(); }

  Element bytes(const ByteSet& set);
  static Element ref(int32_t rule) { return {Element::Kind::rule, rule}; }
  // The bytes of `text`, one element each; where a control marker occurs in it, its bytes or its
  // control byte.
  Sequence literal(std::string_view text);
  // From now on, literal() lets markers[i] be written as the control byte kFirstControlByte + i
  // (at most kMaxControls markers, none empty).
  void write_as_controls(std::vector<std::string> markers);
  // A rule matching `item` repeated min to max times (max < 0: unbounded). Repetitions are
  // right-recursive with the recursion last, so the matcher's stacks do not grow with the count.
  int32_t repeat(Element item, int64_t min, int64_t max);
  // Rules matching any bytes (but control bytes) in which `marker` does not occur (free text before
  // a marker): rule k continues a text that ends with the marker's first k bytes; [0] starts one.
  std::vector<int32_t> text_without(std::string_view marker);
  // A rule matching any bytes in which none of `markers` occurs and whose first byte, where it
  // has one, is in `first` (free text before calls that several markers may open).
  int32_t text_without(const std::vector<std::string_view>& markers, const ByteSet& first);
  // A rule matching one code point of the ranges, UTF-8 encoded (surrogates never match).
  int32_t code_points(std::string_view name, const CodePointRanges& ranges);

  // The finished grammar from `root`: throws GrammarError naming an undefined rule, left
  // recursion, a grammar that matches nothing, or a size beyond the limits. Alternatives that
  // cannot finish are dropped, so every prefix the matcher accepts can be completed.
  std::shared_ptr<const Grammar> build(int32_t root) const;

  const GrammarLimits& limits() const { return limits_; }

 private:
  void count(int64_t elements);

  GrammarLimits limits_;
  std::vector<std::string> controls_;  // markers written as control bytes
  std::vector<int32_t> control_rules_;  // each one's rule: its bytes or its control byte
  std::vector<std::string> names_;
  std::map<std::string, int32_t, std::less<>> by_name_;
  std::map<std::string, int64_t> suffixes_;  // per name: the last suffix add_rule gave it
  std::vector<std::vector<Sequence>> alternatives_;
  std::vector<ByteSet> sets_;
  std::map<std::array<uint64_t, 4>, int32_t> set_index_;
  std::map<std::pair<int64_t, int64_t>, int32_t> tails_;  // (item, k) -> the rule "item{0,k}"
  std::map<int64_t, int32_t> stars_;                      // item -> the rule "item*"
  int64_t elements_ = 0;
};

// The code points [0, 0x10FFFF] outside the ranges.
CodePointRanges complement(CodePointRanges ranges);

// The inclusive code point ranges as UTF-8 byte sequences: each a list of byte ranges, one per
// byte of the encoding (surrogates D800-DFFF left out).
std::vector<std::vector<std::pair<uint8_t, uint8_t>>> utf8_sequences(const CodePointRanges& ranges);

}  // namespace difftx::grammar
