#include "chat/lexer.h"

#include <array>
#include <cstring>

#include "core/error.h"
#include "data/utf8.h"

namespace difftx::chat {
namespace {

// The byte length of the whitespace character that starts at s[i], 0 for another: Python's
// str.isspace, which jinja2's `\s` and rstrip() take (ASCII's six, \x1c-\x1f, and the Unicode
// spaces and separators).
size_t space_at(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
  static const char* const wide[] = {"\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\xa8",
                                     "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  for (const char* w : wide)
    if (s.compare(i, std::strlen(w), w) == 0) return std::strlen(w);
  const bool en_quad_to_hair_space = s.compare(i, 2, "\xe2\x80") == 0 && i + 2 < s.size() &&
                                     static_cast<unsigned char>(s[i + 2]) >= 0x80 && static_cast<unsigned char>(s[i + 2]) <= 0x8a;
  return en_quad_to_hair_space ? 3 : 0;  // U+2000-U+200A
}
// The byte length of the whitespace character that ends just before s[end], 0 for another.
size_t space_before(const std::string& s, size_t end) {
  for (size_t n = 1; n <= 3 && n <= end; ++n)
    if (space_at(s, end - n) == n) return n;
  return 0;
}
// Just past the whitespace from s[i] on.
size_t skip_spaces(const std::string& s, size_t i) {
  while (i < s.size())
    if (const size_t n = space_at(s, i)) i += n;
    else break;
  return i;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
bool is_octal_digit(char c) { return c >= '0' && c <= '7'; }
bool is_binary_digit(char c) { return c == '0' || c == '1'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// jinja2 turns \r\n and \r into \n and drops one trailing newline (keep_trailing_newline off).
std::string normalize_newlines(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Python's unicode-escape decoding of a string literal's body (what jinja2 applies).
std::string unescape(const std::string& body, int line) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    if (const int simple = data::python_simple_escape(c); simple >= 0) {
      out += static_cast<char>(simple);
      continue;
    }
    switch (c) {
      case '\n': break;  // line continuation
      case 'x':
      case 'u':
      case 'U': {
        const size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t k = 1; k <= n; ++k) {
          const int h = i + k < body.size() ? data::hex_digit_value(static_cast<unsigned char>(body[i + k])) : -1;
          DIFFTX_CHECK(h >= 0, "chat template line ", line, ": truncated \\", c, " escape in a string");
          cp = cp * 16 + static_cast<uint32_t>(h);
        }
        DIFFTX_CHECK(cp <= 0x10ffff, "chat template line ", line, ": escape beyond Unicode in a string");
        data::append_utf8(cp, out);
        i += n;
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          uint32_t cp = 0;
          size_t k = 0;
          for (; k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7'; ++k)
            cp = cp * 8 + static_cast<uint32_t>(body[i + k] - '0');
          data::append_utf8(cp, out);
          i += k - 1;
        } else {
          DIFFTX_CHECK(c != 'N', "chat template line ", line, ": \\N{...} escapes are not supported");
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : s_(normalize_newlines(source)) {}

  std::vector<Token> run() {
    while (pos_ < s_.size()) root();
    tokens_.push_back({Token::Type::end, "", line_});
    return std::move(tokens_);
  }

 private:
  bool at(const char* text) const { return s_.compare(pos_, std::strlen(text), text) == 0; }

  void advance(size_t n) {
    for (size_t i = 0; i < n && pos_ < s_.size(); ++i, ++pos_)
      if (s_[pos_] == '\n') ++line_;
  }

  void emit(Token::Type type, std::string value, int line) { tokens_.push_back({type, std::move(value), line}); }

  // Text up to the next tag, then the tag.
  void root() {
    size_t open = pos_;
    while (true) {
      open = s_.find('{', open);
      if (open == std::string::npos || open + 1 >= s_.size()) {
        emit(Token::Type::text, s_.substr(pos_), line_);
        advance(s_.size() - pos_);
        return;
      }
      const char kind = s_[open + 1];
      if (kind == '{' || kind == '%' || kind == '#') break;
      ++open;
    }
    const char kind = s_[open + 1];
    const char sign = open + 2 < s_.size() && (s_[open + 2] == '-' || s_[open + 2] == '+') ? s_[open + 2] : 0;
    std::string text = s_.substr(pos_, open - pos_);
    strip_before_tag(text, kind == '{' && sign != '-' ? '+' : sign);  // no lstrip_blocks before {{
    if (!text.empty()) emit(Token::Type::text, text, line_);
    advance(open - pos_);
    const int tag_line = line_;
    if (const Delimiter raw = tag_named(open, "raw"); raw.end && raw.close != '+') return raw_block(raw, tag_line);
    advance(sign ? 3 : 2);
    if (kind == '#') return comment(tag_line);
    emit(kind == '{' ? Token::Type::variable_begin : Token::Type::block_begin, "", tag_line);
    inside_tag(kind == '{', tag_line);
  }

  // The text before a tag: a `-` strips its trailing whitespace, else lstrip_blocks strips the
  // spaces and tabs between the line's start and a block tag (sign '+': neither).
  void strip_before_tag(std::string& text, char sign) const {
    if (sign == '-') {
      size_t end = text.size();
      while (const size_t n = space_before(text, end)) end -= n;
      text.erase(end);
    } else if (sign != '+') {
      const size_t l_pos = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < text.size() && skip_spaces(text, l_pos) == text.size())
        text.erase(l_pos);
    }
  }

  // A tag made of one word at `at`, as jinja2's lexer finds raw and endraw: `{%`, a sign, spaces,
  // the word, spaces, `%}` with a sign. end: just past it (0: no such tag here).
  struct Delimiter {
    size_t end = 0;
    char open = 0, close = 0;  // the signs: '-', '+' or 0
  };
  Delimiter tag_named(size_t at, const char* word) const {
    Delimiter d;
    if (s_.compare(at, 2, "{%") != 0) return d;
    size_t i = at + 2;
    if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) d.open = s_[i++];
    i = skip_spaces(s_, i);
    if (s_.compare(i, std::strlen(word), word) != 0) return d;
    i = skip_spaces(s_, i + std::strlen(word));
    if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) d.close = s_[i++];
    if (s_.compare(i, 2, "%}") == 0) d.end = i + 2;
    return d;
  }

  // {% raw %}text{% endraw %}: the text verbatim, the whitespace around both tags handled as
  // jinja2 does (the opening tag takes no `+%}` and no trim_blocks newline; the closing one both).
  void raw_block(const Delimiter& raw, int tag_line) {
    advance(raw.end - pos_);
    end_of_tag(raw.close, false);
    for (size_t at = s_.find("{%", pos_); at != std::string::npos; at = s_.find("{%", at + 1)) {
      const Delimiter endraw = tag_named(at, "endraw");
      if (!endraw.end) continue;
      std::string text = s_.substr(pos_, at - pos_);
      strip_before_tag(text, endraw.open);
      if (!text.empty()) emit(Token::Type::text, text, line_);
      advance(endraw.end - pos_);
      end_of_tag(endraw.close, true);
      return;
    }
    fail("chat template line ", tag_line, ": missing {% endraw %} (the template ended)");
  }

  void comment(int tag_line) {
    const size_t close = s_.find("#}", pos_);
    DIFFTX_CHECK(close != std::string::npos, "chat template line ", tag_line, ": a comment {# is never closed");
    const char sign = close > pos_ ? s_[close - 1] : 0;
    advance(close + 2 - pos_);
    end_of_tag(sign == '-' ? '-' : sign == '+' ? '+' : 0, true);
  }

  // After a tag's closing delimiter: `-` strips all whitespace, trim_blocks one newline.
  void end_of_tag(char sign, bool block) {
    bool newline = false;
    if (sign == '-') {
      while (pos_ < s_.size())
        if (const size_t n = space_at(s_, pos_)) {
          newline = s_[pos_] == '\n';
          advance(n);
        } else {
          break;
        }
    } else if (sign != '+' && block && pos_ < s_.size() && s_[pos_] == '\n') {
      advance(1);
      newline = true;
    }
    line_starting_ = newline;
  }

  void inside_tag(bool variable, int tag_line) {
    std::vector<char> balance;
    const char* close = variable ? "}}" : "%}";
    while (true) {
      DIFFTX_CHECK(pos_ < s_.size(), "chat template line ", tag_line, ": a tag ", variable ? "{{" : "{%",
                   " is never closed");
      if (balance.empty()) {
        const bool plus = !variable && s_[pos_] == '+' && s_.compare(pos_ + 1, 2, close) == 0;
        const bool minus = s_[pos_] == '-' && s_.compare(pos_ + 1, 2, close) == 0;
        if (plus || minus || at(close)) {
          emit(variable ? Token::Type::variable_end : Token::Type::block_end, "", line_);
          advance(plus || minus ? 3 : 2);
          end_of_tag(plus ? '+' : minus ? '-' : 0, !variable);
          return;
        }
      }
      const char c = s_[pos_];
      const int line = line_;
      if (const size_t n = space_at(s_, pos_)) {
        advance(n);
      } else if (is_digit(c)) {
        number(line);
      } else if (is_name_start(c)) {
        size_t end = pos_;
        while (end < s_.size() && is_name_char(s_[end])) ++end;
        emit(Token::Type::name, s_.substr(pos_, end - pos_), line);
        advance(end - pos_);
      } else if (c == '\'' || c == '"') {
        string_literal(c, line);
      } else {
        op(balance, line);
      }
    }
  }

  // A number as jinja2's lexer reads one: a float (digits with a fraction, an exponent or both; not right
  // after a '.', where x.1.5 is x[1][5]), else an integer: 0b/0o/0x and digits of that base, decimal digits
  // not starting with 0, or zeros. Underscores may stand between digits; the token keeps them (the parser
  // reads it as Python would).
  void number(int line) {
    auto run = [&](size_t at, bool (*digit)(char)) {  // digits from `at`, single underscores between them
      while (at < s_.size() && (digit(s_[at]) || (s_[at] == '_' && at + 1 < s_.size() && digit(s_[at + 1])))) ++at;
      return at;
    };
    size_t end = run(pos_, is_digit);
    bool is_float = false;
    const bool after_dot = pos_ > 0 && s_[pos_ - 1] == '.';
    if (!after_dot && end + 1 < s_.size() && s_[end] == '.' && is_digit(s_[end + 1])) {
      end = run(end + 1, is_digit);
      is_float = true;
    }
    if (!after_dot && end < s_.size() && (s_[end] == 'e' || s_[end] == 'E')) {
      size_t e = end + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      if (e < s_.size() && is_digit(s_[e])) {
        end = run(e, is_digit);
        is_float = true;
      }
    }
    if (!is_float && s_[pos_] == '0') {
      const char base = pos_ + 1 < s_.size() ? static_cast<char>(s_[pos_ + 1] | 0x20) : 0;
      bool (*digit)(char) = nullptr;
      if (base == 'x') digit = is_hex_digit;
      else if (base == 'o') digit = is_octal_digit;
      else if (base == 'b') digit = is_binary_digit;
      const size_t first = pos_ + 2 + (pos_ + 2 < s_.size() && s_[pos_ + 2] == '_');
      if (digit && first < s_.size() && digit(s_[first])) end = run(first, digit);
      else end = run(pos_, [](char c) { return c == '0'; });
    }
    emit(is_float ? Token::Type::number : Token::Type::integer, s_.substr(pos_, end - pos_), line);
    advance(end - pos_);
  }

  void string_literal(char quote, int line) {
    size_t end = pos_ + 1;
    while (end < s_.size() && s_[end] != quote) end += s_[end] == '\\' ? 2 : 1;
    DIFFTX_CHECK(end < s_.size(), "chat template line ", line, ": a string literal is never closed");
    emit(Token::Type::string, unescape(s_.substr(pos_ + 1, end - pos_ - 1), line), line);
    advance(end + 1 - pos_);
  }

  void op(std::vector<char>& balance, int line) {
    static const std::array<const char*, 26> ops = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "/", "*", "%",
                                                    "~",  "[",  "]",  "(",  ")",  "{",  "}", "<", ">", "=", ".",
                                                    ":",  "|",  ",",  ";"};
    for (const char* o : ops) {
      if (!at(o)) continue;
      const char c = o[0];
      if (o[1] == 0 && (c == '(' || c == '[' || c == '{')) balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
      if (o[1] == 0 && (c == ')' || c == ']' || c == '}')) {
        DIFFTX_CHECK(!balance.empty() && balance.back() == c, "chat template line ", line, ": unexpected '", c, "'");
        balance.pop_back();
      }
      emit(Token::Type::op, o, line);
      advance(std::strlen(o));
      return;
    }
    fail("chat template line ", line, ": unexpected character '", s_[pos_], "'");
  }

  std::string s_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(const std::string& source) { return Lexer(source).run(); }

}  // namespace difftx::chat
