#include "grammar/regex.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "data/utf8.h"

namespace difftx::grammar {
namespace {

constexpr int kMaxGroupDepth = 64;
constexpr int64_t kLengthCap = int64_t{1} << 40;  // lengths saturate here (quantifiers' counts do too)

// The lengths of what two parts in a row match, of what either matches, of a part repeated min to
// max times (max -1: no limit).
MatchLengths then(MatchLengths a, MatchLengths b) {
  return {std::min(a.min + b.min, kLengthCap), a.max < 0 || b.max < 0 ? -1 : std::min(a.max + b.max, kLengthCap)};
}
MatchLengths either(MatchLengths a, MatchLengths b) {
  return {std::min(a.min, b.min), a.max < 0 || b.max < 0 ? -1 : std::max(a.max, b.max)};
}
MatchLengths repeated(MatchLengths a, int64_t min, int64_t max) {
  const auto times = [](int64_t x, int64_t n) {
    return x == 0 || n == 0 ? 0 : std::min(kLengthCap, x * std::min(n, kLengthCap / x));
  };
  if (a.max == 0) return {0, 0};
  return {times(a.min, min), max < 0 || a.max < 0 ? -1 : times(a.max, max)};
}

const CodePointRanges kDigit = {{'0', '9'}};
const CodePointRanges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const CodePointRanges kSpace = {{'\t', '\r'},     {' ', ' '},       {0xA0, 0xA0},     {0x1680, 0x1680},
                                {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
                                {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const CodePointRanges kLineTerminators = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};

std::vector<uint32_t> code_points(std::string_view text) {
  if (data::valid_utf8_prefix(text) != text.size()) throw GrammarError("pattern", "the pattern is not valid UTF-8");
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<uint8_t>(text[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t v = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) v = (v << 6) | (static_cast<uint8_t>(text[i + k]) & 0x3F);
    out.push_back(v);
    i += n;
  }
  return out;
}

class RegexParser {
 public:
  RegexParser(GrammarBuilder& b, std::string_view pattern, const CharacterRule& character, RegexMatch match)
      : b_(b), source_(pattern), cp_(code_points(pattern)), character_(character), match_(match) {}

  int32_t parse(MatchLengths* lengths) {
    const int32_t rule = b_.add_rule("pattern");
    std::optional<Element> anything;  // what a search allows around an alternative
    if (match_ == RegexMatch::search) anything = GrammarBuilder::ref(b_.repeat(character_({{0, 0x10FFFF}}), 0, -1));
    std::optional<MatchLengths> all;
    do {
      const bool from_start = eat('^');
      bool to_end = false;
      MatchLengths l;
      Sequence seq = parse_sequence(0, &to_end, &l);
      if (!from_start && anything) seq.insert(seq.begin(), *anything), l.max = -1;
      if (!to_end && anything) seq.push_back(*anything), l.max = -1;
      b_.add_alternative(rule, std::move(seq));
      all = all ? either(*all, l) : l;
    } while (eat('|'));
    if (pos_ < cp_.size()) error(cp_[pos_] == ')' ? "an unmatched ')'" : "unexpected text");
    if (lengths) *lengths = *all;
    return rule;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    const std::string shown = source_.size() > 60 ? std::string(source_.substr(0, 57)) + "..." : std::string(source_);
    throw GrammarError("pattern", concat("the pattern '", shown, "' cannot be enforced: ", what, " (at character ",
                                         pos_, "; supported: literals, escapes, classes, groups, alternation, "
                                         "quantifiers, ^ and $ around an alternative)"));
  }
  bool at_end() const { return pos_ >= cp_.size(); }
  uint32_t peek(size_t ahead = 0) const { return pos_ + ahead < cp_.size() ? cp_[pos_ + ahead] : 0xFFFFFFFF; }
  bool eat(uint32_t c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  // A part of the pattern: its element and the lengths of what it matches.
  struct Part {
    Element element;
    MatchLengths lengths;
  };

  // Alternatives up to ')' or the end, as one rule.
  Part parse_group(int depth) {
    if (depth > kMaxGroupDepth) error(concat("groups nested deeper than ", kMaxGroupDepth));
    const int32_t rule = b_.add_rule("group");
    std::optional<MatchLengths> all;
    do {
      MatchLengths l;
      b_.add_alternative(rule, parse_sequence(depth, nullptr, &l));
      all = all ? either(*all, l) : l;
    } while (eat('|'));
    return {GrammarBuilder::ref(rule), *all};
  }

  // Quantified atoms up to '|', ')' or the end; at the top level (to_end set) a final '$' too.
  // *lengths: those of what the sequence matches.
  Sequence parse_sequence(int depth, bool* to_end, MatchLengths* lengths) {
    Sequence seq;
    *lengths = {0, 0};
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {
        ++pos_;
        if (to_end && (at_end() || peek() == '|')) {
          *to_end = true;
          break;
        }
        error("'$' that does not end a top-level alternative");
      }
      const Part part = quantified(atom(depth));
      seq.push_back(part.element);
      *lengths = then(*lengths, part.lengths);
    }
    return seq;
  }

  Part atom(int depth) {
    const auto one = [](Element e) { return Part{e, {1, 1}}; };  // one character
    const uint32_t c = peek();
    ++pos_;
    switch (c) {
      case '(': {
        if (eat('?')) {
          if (eat(':')) {
          } else if (peek() == '<' && peek(1) != '=' && peek(1) != '!') {
            while (!at_end() && peek() != '>') ++pos_;
            if (!eat('>')) error("an unterminated group name");
          } else {
            error("lookahead, lookbehind or inline flags");
          }
        }
        const Part group = parse_group(depth + 1);
        if (!eat(')')) error("a missing ')'");
        return group;
      }
      case '[': return one(character_(parse_class()));
      case '.': return one(character_(complement(kLineTerminators)));
      case '\\': return one(character_(parse_escape(false)));
      case '^': error("'^' that does not start a top-level alternative");
      case '*': case '+': case '?': case '{': error("a quantifier with nothing to repeat");
      case ')': case ']': case '}': error(concat("an unmatched '", static_cast<char>(c), "'"));
      default: return one(character_({{c, c}}));
    }
  }

  Part quantified(Part item) {
    int64_t min, max;
    const uint32_t c = peek();
    if (c == '*') min = 0, max = -1;
    else if (c == '+') min = 1, max = -1;
    else if (c == '?') min = 0, max = 1;
    else if (c == '{') {
      ++pos_;
      const auto m = number();
      if (!m) error("'{' that starts no quantifier");
      min = max = *m;
      if (eat(',')) {
        const auto n = number();
        max = n ? *n : -1;
        if (n && *n < *m) error("a quantifier {m,n} with m > n");
      }
      if (peek() != '}') error("an unterminated quantifier");
    } else {
      return item;
    }
    ++pos_;
    eat('?');  // lazy: the same strings
    if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') error("a quantifier of a quantifier");
    if (max < 0 && item.lengths.min == 0)
      error("an unbounded repetition of a part that may match no text, as in (a*)* or (a|)+ (repeat a part "
            "that matches at least one character, such as (a+)* or a*)");
    try {
      return {GrammarBuilder::ref(b_.repeat(item.element, min, max)), repeated(item.lengths, min, max)};
    } catch (const GrammarError& e) {
      error(e.what());
    }
  }

  std::optional<int64_t> number() {
    const size_t start = pos_;
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = std::min<int64_t>(v * 10 + (peek() - '0'), int64_t{1} << 40);
      ++pos_;
    }
    if (pos_ == start) return std::nullopt;
    return v;
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const uint32_t c = peek();
      const int d = data::hex_digit_value(c);
      if (d < 0) error("a malformed hexadecimal escape");
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    return v;
  }

  // After a backslash: the code points it stands for. In a class, \b is a backspace.
  CodePointRanges parse_escape(bool in_class) {
    if (at_end()) error("a pattern ending in '\\'");
    const uint32_t c = cp_[pos_++];
    switch (c) {
      case 'd': return kDigit;
      case 'D': return complement(kDigit);
      case 'w': return kWord;
      case 'W': return complement(kWord);
      case 's': return kSpace;
      case 'S': return complement(kSpace);
      case 't': return {{'\t', '\t'}};
      case 'n': return {{'\n', '\n'}};
      case 'r': return {{'\r', '\r'}};
      case 'f': return {{'\f', '\f'}};
      case 'v': return {{'\v', '\v'}};
      case '0':
        if (peek() >= '0' && peek() <= '9') error("an octal escape");
        return {{0, 0}};
      case 'x': {
        const uint32_t v = hex(2);
        return {{v, v}};
      }
      case 'u': {
        uint32_t v;
        if (eat('{')) {
          v = 0;
          int digits = 0;
          while (peek() != '}' && !at_end()) {
            v = v * 16 + hex(1);
            if (++digits > 6 || v > 0x10FFFF) error("a code point beyond U+10FFFF");
          }
          if (!eat('}') || digits == 0) error("a malformed \\u{...} escape");
        } else {
          v = hex(4);
          if (v >= 0xD800 && v <= 0xDBFF && peek() == '\\' && peek(1) == 'u') {  // a surrogate pair
            pos_ += 2;
            const uint32_t low = hex(4);
            if (low < 0xDC00 || low > 0xDFFF) error("a high surrogate without its low surrogate");
            v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
          } else if (v >= 0xD800 && v <= 0xDFFF) {
            error("a lone surrogate");
          }
        }
        return {{v, v}};
      }
      case 'b':
        if (in_class) return {{8, 8}};
        error("a word boundary (\\b)");
      case 'B': error("a word boundary (\\B)");
      case 'c': error("a control escape (\\c)");
      case 'p': case 'P': error("a Unicode property escape");
      case 'k': error("a named backreference");
      default:
        if (c >= '1' && c <= '9') error("a backreference");
        if (c < 0x80 && std::string_view("^$\\.*+?()[]{}|/-").find(static_cast<char>(c)) == std::string_view::npos)
          error(concat("the escape '\\", static_cast<char>(c), "'"));
        return {{c, c}};
    }
  }

  CodePointRanges parse_class() {
    const bool negated = eat('^');
    CodePointRanges ranges;
    while (peek() != ']') {
      if (at_end()) error("an unterminated class");
      CodePointRanges lo = class_atom();
      if (peek() == '-' && peek(1) != ']' && peek(1) != 0xFFFFFFFF) {
        ++pos_;
        const CodePointRanges hi = class_atom();
        if (lo.size() != 1 || hi.size() != 1 || lo[0].first != lo[0].second || hi[0].first != hi[0].second)
          error("a class range with a class escape at an end");
        if (hi[0].first < lo[0].first) error("a class range out of order");
        lo[0].second = hi[0].first;
      }
      ranges.insert(ranges.end(), lo.begin(), lo.end());
    }
    ++pos_;
    return negated ? complement(ranges) : ranges;
  }

  CodePointRanges class_atom() {
    const uint32_t c = cp_[pos_++];
    if (c == '\\') return parse_escape(true);
    return {{c, c}};
  }

  GrammarBuilder& b_;
  std::string_view source_;
  std::vector<uint32_t> cp_;
  size_t pos_ = 0;
  const CharacterRule& character_;
  RegexMatch match_;
};

}  // namespace

int32_t compile_regex(GrammarBuilder& b, std::string_view pattern, const CharacterRule& character,
                      RegexMatch match, MatchLengths* lengths) {
  return RegexParser(b, pattern, character, match).parse(lengths);
}

}  // namespace difftx::grammar
