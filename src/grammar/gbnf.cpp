#include "grammar/gbnf.h"

#include <algorithm>
#include <map>
#include <optional>

#include "data/utf8.h"

namespace difftx::grammar {
namespace {

constexpr int kMaxGroupDepth = 128;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser {
 public:
  Parser(std::string_view text, GrammarBuilder& b) : text_(text), b_(b) {}

  int32_t parse() {
    // Every defined name first, so that the rules made for literals, classes and groups take
    // other names (to_gbnf() prints those too).
    for (size_t line = 0; line < text_.size(); line = text_.find('\n', line) + 1) {
      size_t i = line;
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
      const size_t name = i;
      while (i < text_.size() && name_char(text_[i])) ++i;
      const size_t end = i;
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
      if (end > name && text_.substr(i, 3) == "::=") b_.named_rule(text_.substr(name, end - name));
      if (text_.find('\n', line) == std::string_view::npos) break;
    }
    int32_t first = -1;
    skip_space(true);
    while (pos_ < text_.size()) {
      const std::string name = parse_name();
      skip_space(false);
      if (text_.substr(pos_, 3) != "::=") error("expected '::=' after the rule name '" + name + "'");
      pos_ += 3;
      const int32_t rule = b_.named_rule(name);
      if (b_.has_alternatives(rule)) error("rule '" + name + "' is defined twice");
      if (first < 0) first = rule;
      skip_space(true);  // a rule's body may start on the next line (llama.cpp's json.gbnf)
      parse_alternatives(rule, 0);
      skip_space(true);
    }
    if (first < 0) error("the grammar has no rules");
    // As llama.cpp: every rule used is defined, used or not from root, and root is the start.
    for (const auto& [name, at] : used_)
      if (!b_.has_alternatives(b_.named_rule(name))) pos_ = at, error("rule '" + name + "' is not defined");
    const int32_t root = b_.named_rule("root");
    if (!b_.has_alternatives(root)) pos_ = 0, error("the grammar has no 'root' rule, where generation starts");
    return root;
  }

 private:
  [[noreturn]] void error(const std::string& message) const {
    int64_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') ++line, column = 1;
      else ++column;
    }
    throw GrammarError("grammar", concat("grammar line ", line, " column ", column, ": ", message));
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  // Spaces and comments; newlines too when newlines_ok.
  void skip_space(bool newlines_ok) {
    while (!at_end()) {
      const char c = peek();
      if (c == '#') {
        while (!at_end() && peek() != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines_ok)) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && name_char(peek())) ++pos_;
    if (pos_ == start) error(concat("expected a rule name, found '", std::string(1, peek()), "'"));
    return std::string(text_.substr(start, pos_ - start));
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = peek();
      const int d = data::hex_digit_value(static_cast<unsigned char>(c));
      if (d < 0) error(concat("expected ", digits, " hexadecimal digits"));
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) error(concat("U+", v, " is not a Unicode scalar value"));
    return v;
  }

  // One code point of a literal or class, escapes decoded.
  uint32_t parse_char() {
    if (at_end()) error("unexpected end of the grammar");
    const auto c = static_cast<uint8_t>(text_[pos_]);
    if (c == '\\') {
      ++pos_;
      const char e = peek();
      ++pos_;
      switch (e) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case '\\': case '"': case ']': case '[': case '-': case '^': return static_cast<uint8_t>(e);
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        default: --pos_, error(concat("unknown escape '\\", std::string(1, e), "'"));
      }
    }
    // A UTF-8 character of the grammar text.
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || pos_ + n > text_.size()) error("invalid UTF-8 in the grammar");
    uint32_t v = n == 1 ? c : c & (0x7F >> n);
    for (int i = 1; i < n; ++i) {
      const auto k = static_cast<uint8_t>(text_[pos_ + i]);
      if ((k & 0xC0) != 0x80) error("invalid UTF-8 in the grammar");
      v = (v << 6) | (k & 0x3F);
    }
    pos_ += n;
    return v;
  }

  Element parse_literal() {
    ++pos_;  // "
    std::string bytes;
    while (peek() != '"') {
      if (at_end() || peek() == '\n') error("unterminated string literal");
      data::append_utf8(parse_char(), bytes);
    }
    ++pos_;
    const int32_t r = b_.add_rule("literal");
    b_.add_alternative(r, b_.literal(bytes));
    return GrammarBuilder::ref(r);
  }

  Element parse_class() {
    ++pos_;  // [
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    CodePointRanges ranges;
    while (peek() != ']') {
      if (at_end() || peek() == '\n') error("unterminated character class");
      const size_t start = pos_;
      const uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        hi = parse_char();
        if (hi < lo) pos_ = start, error("a character range runs backwards");
      }
      ranges.emplace_back(lo, hi);
    }
    ++pos_;
    if (negated) ranges = complement(ranges);
    return GrammarBuilder::ref(b_.code_points("class", ranges));
  }

  std::optional<int64_t> parse_count() {
    const size_t start = pos_;
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + (peek() - '0');
      if (v > b_.limits().max_repeat) error(concat("a repetition count beyond the limit of ", b_.limits().max_repeat));
      ++pos_;
    }
    if (pos_ == start) return std::nullopt;
    return v;
  }

  // Alternatives until the end of the rule (depth 0: a newline not after '|') or ')'.
  void parse_alternatives(int32_t rule, int depth) {
    for (;;) {
      b_.add_alternative(rule, parse_sequence(depth));
      skip_space(depth > 0);
      if (peek() != '|') break;
      ++pos_;
      skip_space(true);
    }
  }

  Sequence parse_sequence(int depth) {
    Sequence seq;
    for (;;) {
      skip_space(depth > 0);
      const char c = peek();
      Element item;
      if (c == '"') {
        item = parse_literal();
      } else if (c == '[') {
        item = parse_class();
      } else if (c == '.') {
        ++pos_;
        item = GrammarBuilder::ref(b_.code_points("any", {{0, 0x10FFFF}}));
      } else if (c == '(') {
        if (depth + 1 > kMaxGroupDepth) error(concat("groups nested deeper than ", kMaxGroupDepth));
        ++pos_;
        skip_space(true);
        const int32_t group = b_.add_rule("group");
        parse_alternatives(group, depth + 1);
        skip_space(true);
        if (peek() != ')') error("expected ')'");
        ++pos_;
        item = GrammarBuilder::ref(group);
      } else if (name_char(c)) {
        const size_t save = pos_;
        const std::string name = parse_name();
        skip_space(false);
        if (text_.substr(pos_, 3) == "::=") {  // the next rule starts: this sequence has ended
          pos_ = save;
          if (depth > 0) error("expected ')' before the next rule");
          return seq;
        }
        pos_ = save + name.size();
        used_.emplace(name, save);
        item = GrammarBuilder::ref(b_.named_rule(name));
      } else {
        if (c != '|' && c != ')' && c != '\n' && c != '\r' && !at_end())
          error(concat("unexpected '", std::string(1, c), "'"));
        if (c == ')' && depth == 0) error("unmatched ')'");
        return seq;
      }
      seq.push_back(postfix(item, depth));
    }
  }

  // Repetition operators after an item, spaces allowed before each (newlines too inside a group).
  Element postfix(Element item, int depth) {
    for (;;) {
      const size_t before = pos_;
      skip_space(depth > 0);
      const char c = peek();
      int64_t min, max;
      if (c == '*') min = 0, max = -1;
      else if (c == '+') min = 1, max = -1;
      else if (c == '?') min = 0, max = 1;
      else if (c == '{') {
        ++pos_;
        skip_space(false);
        const auto m = parse_count();
        if (!m) error("expected a number after '{'");
        min = max = *m;
        skip_space(false);
        if (peek() == ',') {
          ++pos_;
          skip_space(false);
          const auto n = parse_count();
          max = n ? *n : -1;
          if (n && *n < *m) error("a repetition {m,n} needs m <= n");
          skip_space(false);
        }
        if (peek() != '}') error("expected '}'");
      } else {
        pos_ = before;
        return item;
      }
      ++pos_;
      try {
        item = GrammarBuilder::ref(b_.repeat(item, min, max));
      } catch (const GrammarError& e) {
        error(e.what());
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  GrammarBuilder& b_;
  std::map<std::string, size_t> used_;  // each rule name used, and where first
};

}  // namespace

int32_t parse_gbnf_into(GrammarBuilder& builder, std::string_view text) {
  try {
    return Parser(text, builder).parse();
  } catch (const GrammarError& e) {
    if (!e.where.empty()) throw;
    throw GrammarError("grammar", e.what());  // a limit the builder hit
  }
}

std::shared_ptr<const Grammar> parse_gbnf(std::string_view text, GrammarLimits limits) {
  GrammarBuilder b(limits);
  const int32_t root = parse_gbnf_into(b, text);
  try {
    return b.build(root);
  } catch (const GrammarError& e) {
    throw GrammarError("grammar", e.what());
  }
}

}  // namespace difftx::grammar
