#include "serve/python_literal.h"

#include <cmath>

#include "data/utf8.h"

namespace difftx::serve {
namespace {

using json = nlohmann::ordered_json;

constexpr int kMaxDepth = 256;

bool identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool identifier_char(char c) { return identifier_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

class Reader {
 public:
  Reader(std::string_view t, size_t& i) : t_(t), i_(i) {}

  Scan value(json& out, int depth) {
    if (depth > kMaxDepth) return Scan::bad;
    if (i_ >= t_.size()) return Scan::more;
    const char c = t_[i_];
    if (c == '[') return list(out, depth);
    if (c == '{') return dict(out, depth);
    if (c == '"' || c == '\'') return string(out, false);
    if (c == '-' || c == '+' || digit(c) || c == '.') return number(out);
    if (!identifier_start(c)) return Scan::bad;
    std::string word;
    if (const Scan s = read_python_identifier(t_, i_, word); s != Scan::done) return s;
    // A prefixed string: r, u (bytes and f-strings are no JSON values).
    if (i_ < t_.size() && (t_[i_] == '"' || t_[i_] == '\'')) {
      if (word == "r" || word == "R") return string(out, true);
      if (word == "u" || word == "U") return string(out, false);
      return Scan::bad;
    }
    if (word == "None") out = nullptr;
    else if (word == "True") out = true;
    else if (word == "False") out = false;
    else return Scan::bad;
    return Scan::done;
  }

 private:
  // Items up to `close`, separated by commas (one may trail), each read by `item`.
  template <class Item>
  Scan items(char close, Item item) {
    ++i_;
    for (;;) {
      i_ = skip_python_space(t_, i_);
      if (i_ >= t_.size()) return Scan::more;
      if (t_[i_] == close) return ++i_, Scan::done;
      if (const Scan s = item(); s != Scan::done) return s;
      i_ = skip_python_space(t_, i_);
      if (i_ >= t_.size()) return Scan::more;
      if (t_[i_] == close) return ++i_, Scan::done;
      if (t_[i_] != ',') return Scan::bad;
      ++i_;
    }
  }

  Scan list(json& out, int depth) {
    out = json::array();
    return items(']', [&] {
      json v;
      const Scan s = value(v, depth + 1);
      if (s == Scan::done) out.push_back(std::move(v));
      return s;
    });
  }

  Scan dict(json& out, int depth) {
    out = json::object();
    return items('}', [&] {
      json key, v;
      if (const Scan s = value(key, depth + 1); s != Scan::done) return s;
      if (!key.is_string()) return Scan::bad;  // JSON keys are strings
      i_ = skip_python_space(t_, i_);
      if (i_ >= t_.size()) return Scan::more;
      if (t_[i_] != ':') return Scan::bad;
      i_ = skip_python_space(t_, i_ + 1);
      const Scan s = value(v, depth + 1);
      if (s == Scan::done) out[key.get<std::string>()] = std::move(v);  // a repeated key: the last value, as Python
      return s;
    });
  }

  // [+-] digits [. digits] [e [+-] digits], or . digits ...: JSON's number of the same value
  // (an int, or a float where Python's is one).
  Scan number(json& out) {
    std::string text;
    if (t_[i_] == '-' || t_[i_] == '+') {
      if (t_[i_] == '-') text += '-';
      i_ = skip_python_space(t_, i_ + 1);
    }
    const auto digits = [&] {
      const size_t from = i_;
      while (i_ < t_.size() && digit(t_[i_])) ++i_;
      return std::string(t_.substr(from, i_ - from));
    };
    std::string whole = digits(), fraction;
    bool is_float = false;
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      is_float = true;
      fraction = digits();
    }
    if (whole.empty() && fraction.empty()) return i_ >= t_.size() ? Scan::more : Scan::bad;
    if (!is_float && whole.size() > 1 && whole[0] == '0' && whole.find_first_not_of('0') != std::string::npos)
      return Scan::bad;  // 007: no Python int
    whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
    text += (whole.empty() ? "0" : whole);
    if (is_float) {
      text += '.';
      text += fraction.empty() ? std::string("0") : fraction;
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      text += 'e';
      if (i_ < t_.size() && (t_[i_] == '-' || t_[i_] == '+')) text += t_[i_++];
      const std::string e = digits();
      if (e.empty()) return i_ >= t_.size() ? Scan::more : Scan::bad;
      text += e;
      is_float = true;
    }
    if (i_ >= t_.size()) return Scan::more;  // a number is followed by a bracket's comma or close
    if (identifier_char(t_[i_]) || t_[i_] == '.') return Scan::bad;  // 0x1F, 1j, 1_000, 1.2.3
    try {
      out = json::parse(text);
    } catch (const json::exception&) {
      return Scan::bad;
    }
    if (out.is_number_float() && !std::isfinite(out.get<double>())) return Scan::bad;
    return Scan::done;
  }

  // \uXXXX, \UXXXXXXXX, \xXX: `n` hex digits into cp.
  Scan hex(int n, uint32_t& cp) {
    cp = 0;
    for (int k = 0; k < n; ++k, ++i_) {
      if (i_ >= t_.size()) return Scan::more;
      const int h = data::hex_digit_value(static_cast<unsigned char>(t_[i_]));
      if (h < 0) return Scan::bad;
      cp = cp * 16 + static_cast<uint32_t>(h);
    }
    return Scan::done;
  }

  Scan string(json& out, bool raw) {
    const char q = t_[i_];
    // Three quotes open a triple-quoted string; two, an empty one.
    const auto quotes_at = [&](size_t at) {
      size_t k = 0;
      while (k < 3 && at + k < t_.size() && t_[at + k] == q) ++k;
      return k;
    };
    const size_t opening = quotes_at(i_);
    if (opening == 2 && i_ + 2 >= t_.size()) return Scan::more;  // "" or the start of """
    const bool triple = opening == 3;
    i_ += triple ? 3 : 1;
    std::string s;
    uint32_t high = 0;  // a high surrogate waiting for its low half
    for (;;) {
      if (i_ >= t_.size()) return Scan::more;
      const char c = t_[i_];
      if (c == q) {
        if (!triple) break;
        const size_t k = quotes_at(i_);
        if (k == 3) break;
        if (i_ + k >= t_.size()) return Scan::more;
      }
      if (high && (c != '\\' || raw)) return Scan::bad;
      if (!triple && (c == '\n' || c == '\r')) return Scan::bad;
      if (c != '\\') {
        s += c;
        ++i_;
        continue;
      }
      if (i_ + 1 >= t_.size()) return Scan::more;
      const char e = t_[i_ + 1];
      if (raw) {  // the backslash stays; it only keeps the next character from ending the string
        s += c;
        s += e;
        i_ += 2;
        continue;
      }
      i_ += 2;
      uint32_t cp = 0;
      if (const int simple = data::python_simple_escape(e); simple >= 0) {
        if (high) return Scan::bad;  // a high surrogate must be followed by a low one
        s += static_cast<char>(simple);
        continue;
      }
      switch (e) {
        case '\n': continue;  // a line continuation
        case '\r':
          if (i_ >= t_.size()) return Scan::more;
          if (t_[i_] == '\n') ++i_;
          continue;
        case 'x': case 'u': case 'U':
          if (const Scan h = hex(e == 'x' ? 2 : e == 'u' ? 4 : 8, cp); h != Scan::done) return h;
          break;
        case 'N': return Scan::bad;  // \N{name}: not supported
        default:
          if (e >= '0' && e <= '7') {
            cp = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2; ++k, ++i_) {
              if (i_ >= t_.size()) return Scan::more;
              if (t_[i_] < '0' || t_[i_] > '7') break;
              cp = cp * 8 + static_cast<uint32_t>(t_[i_] - '0');
            }
            break;
          }
          s += '\\';  // an unknown escape keeps its backslash
          i_ -= 1;
          continue;
      }
      if (cp > 0x10FFFF) return Scan::bad;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (high) return Scan::bad;
        high = cp;
        continue;
      }
      if (cp >= 0xDC00 && cp <= 0xDFFF) {
        if (!high) return Scan::bad;  // a lone surrogate has no UTF-8
        cp = 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00);
        high = 0;
      } else if (high) {
        return Scan::bad;
      }
      data::append_utf8(cp, s);
    }
    if (high) return Scan::bad;
    i_ += triple ? 3 : 1;
    out = std::move(s);
    return Scan::done;
  }

  std::string_view t_;
  size_t& i_;
};

}  // namespace

size_t skip_python_space(std::string_view t, size_t i) {
  for (;;) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r' || t[i] == '\f')) ++i;
    if (i + 1 < t.size() && t[i] == '\\' && t[i + 1] == '\n') i += 2;
    else return i;
  }
}

Scan read_python_identifier(std::string_view text, size_t& i, std::string& out) {
  if (i >= text.size()) return Scan::more;
  if (!identifier_start(text[i])) return Scan::bad;
  const size_t from = i;
  while (i < text.size() && identifier_char(text[i])) ++i;
  if (i >= text.size()) return Scan::more;
  out = std::string(text.substr(from, i - from));
  return Scan::done;
}

Scan read_python_literal(std::string_view text, size_t& i, json& out) { return Reader(text, i).value(out, 0); }

}  // namespace difftx::serve
