// JSON numbers (json_grammar.h). Unbounded: -?(0|[1-9][0-9]{0,15})(.[0-9]{1,16})?([eE][-+]?[0-9]{1,2})?
// (integers without the fraction and exponent). Bounded by minimum / maximum / exclusive*: plain
// decimals without an exponent whose value lies in the range, by a digit automaton that compares
// the text with the bounds digit by digit (and, with multipleOf, carries the digits' remainder).
// Validators compare as doubles: with at most 15
// significant digits a decimal rounds to a double of its own, so a decimal above an exclusive
// bound is a double above it too.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>
#include <optional>

#include "grammar/json_grammar.h"
#include "io/json_file.h"

namespace difftx::grammar {
namespace {

using json = nlohmann::ordered_json;

constexpr int kDigits = 16;          // unbounded numbers: digits before / after the point
constexpr int kBoundedDigits = 15;   // bounded numbers: significant digits in all
constexpr int64_t kMaxModulus = 100; // multipleOf: the most remainders the digits carry

// A decimal's magnitude: integer digits without leading zeros ("0" for none), fraction digits
// without trailing zeros.
struct Decimal {
  bool negative = false;
  std::string whole = "0", fraction;
};

Decimal decimal_of(const json& v, const std::string& where) {
  std::string text;
  if (v.is_number_integer()) {
    text = v.dump();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) throw GrammarError(where, "a bound must be finite");
    char buf[400];
    const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);  // shortest round trip
    text.assign(buf, r.ptr);
  } else {
    throw GrammarError(where, "a bound must be a number, not " + io::json_value_for_message(v));
  }
  Decimal out;
  size_t i = 0;
  if (text[0] == '-') out.negative = true, i = 1;
  const size_t point = text.find('.');
  out.whole = text.substr(i, point == std::string::npos ? std::string::npos : point - i);
  if (point != std::string::npos) out.fraction = text.substr(point + 1);
  while (out.whole.size() > 1 && out.whole[0] == '0') out.whole.erase(0, 1);
  while (!out.fraction.empty() && out.fraction.back() == '0') out.fraction.pop_back();
  if (out.whole == "0" && out.fraction.empty()) out.negative = false;
  return out;
}

int compare_magnitude(const Decimal& a, const Decimal& b) {
  if (a.whole.size() != b.whole.size()) return a.whole.size() < b.whole.size() ? -1 : 1;
  if (const int c = a.whole.compare(b.whole)) return c < 0 ? -1 : 1;
  if (const int c = a.fraction.compare(b.fraction)) return c < 0 ? -1 : 1;
  return 0;
}

int compare(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int c = compare_magnitude(a, b);
  return a.negative ? -c : c;
}

struct Bound {
  Decimal value;
  bool inclusive = true;
};

// multipleOf m = P x 10^-q (P a whole number): a text of whole and fraction digits N x 10^-f is a
// multiple of m where f <= q and N x 10^(q - f) = 0 (mod P), so the digits carry N mod P.
struct Multiple {
  int64_t P = 1;                 // 1: every text of at most q fraction digits
  int q = kDigits;               // the most fraction digits
  std::vector<int64_t> pow10;    // 10^k mod P, k in [0, q]
  bool ends(int64_t r, int consumed) const { return P == 1 || r * pow10[q - consumed] % P == 0; }
};

// Decimal texts (no sign) within [lo, hi], both non-negative; hi none: any with max_whole digits;
// multiples of `multiple` only. The states where no bound is tight depend only on the digits left
// (and the remainder), so the lengths share them.
class RangeDigits {
 public:
  RangeDigits(GrammarBuilder& b, const Bound& lo, const std::optional<Bound>& hi, int max_whole, bool integer,
              const Multiple& multiple)
      : b_(b), lo_(lo), hi_(hi), max_whole_(max_whole), integer_(integer), m_(multiple) {}

  std::optional<int32_t> build() {
    const int32_t r = b_.add_rule("range");
    const int first = static_cast<int>(lo_.value.whole.size());
    const int last = hi_ ? std::min<int>(static_cast<int>(hi_->value.whole.size()), max_whole_) : max_whole_;
    for (int length = first; length <= last; ++length) {
      length_ = length;
      const bool hi_tight = hi_ && length == static_cast<int>(hi_->value.whole.size());
      if (const auto s = whole(0, length == first, hi_tight, 0)) b_.add_alternative(r, {GrammarBuilder::ref(*s)});
    }
    if (!b_.has_alternatives(r)) return std::nullopt;
    return r;
  }

 private:
  using Key = std::array<int64_t, 5>;  // state kind, its places and flags, remainder
  static int digit(const std::string& s, int i) { return i < static_cast<int>(s.size()) ? s[i] - '0' : 0; }
  int fraction_digits() const { return integer_ ? 0 : std::min(m_.q, std::max(0, kBoundedDigits - length_)); }

  // Whether the text may end here, `consumed` fraction digits in, remainder r: equal to a tight
  // bound only where that bound is inclusive, below a tight lower bound never; a multiple.
  bool may_end(bool lo_tight, bool hi_tight, int consumed, int64_t r) const {
    const auto rest_zero = [consumed](const std::string& f) { return static_cast<int>(f.size()) <= consumed; };
    if (lo_tight && !(rest_zero(lo_.value.fraction) && lo_.inclusive)) return false;
    if (hi_tight && rest_zero(hi_->value.fraction) && !hi_->inclusive) return false;
    return m_.ends(r, consumed);
  }

  // Digit groups at one place: [from, to] with the bounds' tightness after each (one digit a
  // group where the remainder tells them apart).
  template <class Next>
  void digits(int32_t rule, int lo_d, int hi_d, bool lo_tight, int lo_digit, bool hi_tight, int hi_digit, int64_t r,
              Next next) {
    for (int d = lo_d; d <= hi_d;) {
      const bool lt = lo_tight && d == lo_digit, ht = hi_tight && d == hi_digit;
      int e = d;
      while (m_.P == 1 && e + 1 <= hi_d && (lo_tight && e + 1 == lo_digit) == lt && (hi_tight && e + 1 == hi_digit) == ht)
        ++e;
      if (const auto to = next(lt, ht, (r * 10 + d) % m_.P))
        b_.add_alternative(rule,
                           {b_.bytes(ByteSet::range(static_cast<uint8_t>('0' + d), static_cast<uint8_t>('0' + e))),
                            GrammarBuilder::ref(*to)});
      d = e + 1;
    }
  }

  std::optional<int32_t> finish(const Key& key, int32_t rule) {
    return memo_[key] = b_.has_alternatives(rule) ? std::optional<int32_t>(rule) : std::nullopt;
  }

  // The integer digits from place p of length_, remainder r so far.
  std::optional<int32_t> whole(int p, bool lo_tight, bool hi_tight, int64_t r) {
    const Key key = lo_tight || hi_tight ? Key{0, length_, p, lo_tight * 2 + hi_tight, r}
                                         : Key{1, length_ - p, fraction_digits(), p == 0, r};
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    const int32_t rule = b_.add_rule("range-digits");
    if (p == length_) {
      if (may_end(lo_tight, hi_tight, 0, r)) b_.add_alternative(rule, {});
      if (fraction_digits() > 0)
        if (const auto f = fraction(0, lo_tight, hi_tight, r))
          b_.add_alternative(rule, {b_.bytes(ByteSet::of('.')), GrammarBuilder::ref(*f)});
    } else {
      const int lo_digit = digit(lo_.value.whole, p), hi_digit = hi_tight ? digit(hi_->value.whole, p) : 9;
      int lo_d = lo_tight ? lo_digit : 0;
      if (p == 0 && length_ > 1) lo_d = std::max(lo_d, 1);  // no leading zero
      digits(rule, lo_d, hi_tight ? hi_digit : 9, lo_tight, lo_digit, hi_tight, hi_digit, r,
             [&](bool lt, bool ht, int64_t next) { return whole(p + 1, lt, ht, next); });
    }
    return finish(key, rule);
  }

  // The fraction digits after `consumed` of them (the first at least is required).
  std::optional<int32_t> fraction(int consumed, bool lo_tight, bool hi_tight, int64_t r) {
    const Key key = lo_tight || hi_tight ? Key{2, length_, consumed, lo_tight * 2 + hi_tight, r}
                                         : Key{3, fraction_digits(), consumed, 0, r};
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    const int32_t rule = b_.add_rule("range-fraction");
    if (consumed > 0 && may_end(lo_tight, hi_tight, consumed, r)) b_.add_alternative(rule, {});
    if (consumed < fraction_digits()) {
      const int lo_digit = digit(lo_.value.fraction, consumed);
      const int hi_digit = hi_tight ? digit(hi_->value.fraction, consumed) : 9;
      digits(rule, lo_tight ? lo_digit : 0, hi_tight ? hi_digit : 9, lo_tight, lo_digit, hi_tight, hi_digit, r,
             [&](bool lt, bool ht, int64_t next) { return fraction(consumed + 1, lt, ht, next); });
    }
    return finish(key, rule);
  }

  GrammarBuilder& b_;
  Bound lo_;
  std::optional<Bound> hi_;
  int max_whole_;
  bool integer_;
  Multiple m_;
  int length_ = 0;
  std::map<Key, std::optional<int32_t>> memo_;
};

// The schema's multipleOf (none: every text).
Multiple multiple_of(const json& s, const std::string& path) {
  Multiple m;
  const auto it = s.find("multipleOf");
  if (it == s.end()) return m;
  const std::string where = path + "/multipleOf";
  const Decimal d = decimal_of(*it, where);
  if (d.negative || (d.whole == "0" && d.fraction.empty())) throw GrammarError(where, "'multipleOf' must be above 0");
  const std::string digits = (d.whole == "0" ? "" : d.whole) + d.fraction;
  const size_t first = digits.find_first_not_of('0');
  const std::string P = digits.substr(first);
  if (P.size() > 3 || std::stoll(P) > kMaxModulus)
    throw GrammarError(where, concat("'multipleOf' ", io::json_value_for_message(*it), " needs ",
                                     P.size() > 12 ? "more than 10^12" : P, " remainders: at most ", kMaxModulus,
                                     " can be enforced"));
  if (d.fraction.size() > static_cast<size_t>(kBoundedDigits))
    throw GrammarError(where, concat("'multipleOf' ", io::json_value_for_message(*it), " has more than ", kBoundedDigits,
                                     " fraction digits"));
  m.P = std::stoll(P);
  m.q = static_cast<int>(d.fraction.size());
  m.pow10.assign(m.q + 1, 1 % m.P);
  for (int k = 1; k <= m.q; ++k) m.pow10[k] = m.pow10[k - 1] * 10 % m.P;
  return m;
}

// Validators check multipleOf in doubles: ajv takes r = x / m and refuses r !== parseInt(r), Python's
// jsonschema int(r) != r. Where m is no binary fraction, an exact decimal multiple may fail it
// (0.3 / 0.1 = 2.9999999999999996), so such an m admits only the multiples that pass as they check.

constexpr int64_t kMaxListedMultiples = 4096;  // a bounded range's multiples listed one by one

using Int = __int128;

// Whether m = P / 10^q is a binary fraction (its double is m): then every multiple of at most
// kBoundedDigits digits is a double too, and so is its quotient.
bool binary_exact(const Multiple& m) {
  int64_t pow5 = 1;
  for (int i = 0; i < m.q; ++i) pow5 *= 5;
  return m.P % pow5 == 0;
}

double double_of(const Multiple& m) {
  return std::strtod((std::to_string(m.P) + "e-" + std::to_string(m.q)).c_str(), nullptr);
}

// As ajv and jsonschema judge x a multiple of m (given as its double).
bool passes_as_validators_check(const std::string& x, double m) {
  const double r = std::strtod(x.c_str(), nullptr) / m;
  return r == std::trunc(r) && std::fabs(r) < 1e21;  // parseInt reads 1e21 as 1
}

// Whether every whole multiple n = k m, |k| < 2^53, passes: n / fl(m) = k m / fl(m) is within half
// an ulp of k for every k below 2^(e + 1) exactly where |fl(m) - m| <= 2^-54 fl(m). With
// fl(m) = M 2^E and m = P / 10^q: |M 10^q - P 2^-E| 2^54 <= M 10^q (m < 2^53 here, so E < 0).
bool whole_multiples_pass(const Multiple& m) {
  int e = 0;
  const double f = std::frexp(double_of(m), &e);
  const auto M = static_cast<Int>(std::ldexp(f, 53));
  const int shift = 53 - e;  // -E
  Int pow10 = 1;
  for (int i = 0; i < m.q; ++i) pow10 *= 10;
  if (shift <= 0 || shift > 120) return false;
  const Int a = M * pow10, b = static_cast<Int>(m.P) << shift;
  const Int diff = a > b ? a - b : b - a;
  return diff <= (a >> 54) && (diff << 54) <= a;
}

// d x 10^q as an integer, rounded down or up.
Int scaled(const Decimal& d, int q, bool up) {
  Int v = 0;
  for (const char c : d.whole) v = v * 10 + (c - '0');
  for (int i = 0; i < q; ++i) v = v * 10 + (i < static_cast<int>(d.fraction.size()) ? d.fraction[i] - '0' : 0);
  const bool rest = static_cast<int>(d.fraction.size()) > q;  // digits past q (none of them trailing zeros)
  if (d.negative) v = -v;
  if (rest && !d.negative && up) v += 1;
  if (rest && d.negative && !up) v -= 1;
  return v;
}

Int floor_div(Int a, Int b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// The decimal of a whole number.
Decimal whole_decimal(Int v) {
  Decimal d;
  d.negative = v < 0;
  if (v < 0) v = -v;
  d.whole.clear();
  do d.whole.insert(d.whole.begin(), static_cast<char>('0' + static_cast<int>(v % 10))); while ((v /= 10) > 0);
  return d;
}

// The decimal k P / 10^q: k P's digits with the point q places in.
Decimal multiple_text(Int k, const Multiple& m) {
  Decimal d = whole_decimal(k * m.P);
  const auto q = static_cast<size_t>(m.q);
  if (d.whole.size() <= q) d.whole.insert(0, q + 1 - d.whole.size(), '0');
  d.fraction = d.whole.substr(d.whole.size() - q);
  d.whole.erase(d.whole.size() - q);
  while (!d.fraction.empty() && d.fraction.back() == '0') d.fraction.pop_back();
  if (d.whole == "0" && d.fraction.empty()) d.negative = false;
  return d;
}

std::string text_of(const Decimal& d) {
  return (d.negative ? "-" : "") + d.whole + (d.fraction.empty() ? "" : "." + d.fraction);
}

bool within(const Decimal& d, const std::optional<Bound>& lo, const std::optional<Bound>& hi) {
  if (lo && (lo->inclusive ? compare(d, lo->value) < 0 : compare(d, lo->value) <= 0)) return false;
  return !hi || (hi->inclusive ? compare(d, hi->value) <= 0 : compare(d, hi->value) < 0);
}

// A bounded range's multiples that pass as validators check them; none: more than can be listed.
std::optional<std::vector<std::string>> listed_multiples(const Multiple& m, const std::optional<Bound>& lo,
                                                         const std::optional<Bound>& hi, bool integer) {
  if (!lo || !hi) return std::nullopt;
  const Int first = -floor_div(-scaled(lo->value, m.q, true), m.P), last = floor_div(scaled(hi->value, m.q, false), m.P);
  if (last - first >= kMaxListedMultiples) return std::nullopt;
  const double md = double_of(m);
  std::vector<std::string> texts;
  for (Int k = first; k <= last; ++k) {
    const Decimal d = multiple_text(k, m);
    const std::string text = text_of(d);
    if ((!integer || d.fraction.empty()) && within(d, lo, hi) &&
        d.whole.size() + d.fraction.size() <= static_cast<size_t>(kBoundedDigits + 1) &&
        passes_as_validators_check(text, md))
      texts.push_back(text);
  }
  return texts;
}

}  // namespace

int32_t JsonGrammar::integer_any() {
  if (const auto it = shared_.find("integer"); it != shared_.end()) return it->second;
  const Element sign = GrammarBuilder::ref(b_.repeat(b_.bytes(ByteSet::of('-')), 0, 1));
  const int32_t digits = b_.repeat(b_.bytes(ByteSet::range('0', '9')), 0, kDigits - 1);
  const int32_t whole = b_.add_rule(
      "integer-digits", {b_.literal("0"), {b_.bytes(ByteSet::range('1', '9')), GrammarBuilder::ref(digits)}});
  const int32_t r = b_.add_rule("integer", {{sign, GrammarBuilder::ref(whole)}});
  shared_["integer"] = r;
  shared_["integer-digits"] = whole;
  return r;
}

int32_t JsonGrammar::number_any() {
  if (const auto it = shared_.find("number"); it != shared_.end()) return it->second;
  integer_any();
  const Element d = b_.bytes(ByteSet::range('0', '9'));
  const int32_t fraction =
      b_.repeat(GrammarBuilder::ref(b_.add_rule(
                    "fraction", {{b_.bytes(ByteSet::of('.')), GrammarBuilder::ref(b_.repeat(d, 1, kDigits))}})),
                0, 1);
  ByteSet e, sign;
  e.add('e'), e.add('E'), sign.add('+'), sign.add('-');
  const int32_t exponent = b_.repeat(
      GrammarBuilder::ref(b_.add_rule("exponent", {{b_.bytes(e), GrammarBuilder::ref(b_.repeat(b_.bytes(sign), 0, 1)),
                                                    GrammarBuilder::ref(b_.repeat(d, 1, 2))}})), 0, 1);
  const Element minus = GrammarBuilder::ref(b_.repeat(b_.bytes(ByteSet::of('-')), 0, 1));
  const int32_t r = b_.add_rule("number", {{minus, GrammarBuilder::ref(shared_["integer-digits"]),
                                            GrammarBuilder::ref(fraction), GrammarBuilder::ref(exponent)}});
  shared_["number"] = r;
  return r;
}

int32_t JsonGrammar::compile_number(const json& s, const std::string& path, bool integer) {
  std::optional<Bound> lo, hi;
  const auto bound = [&](const char* key, const char* exclusive_key, bool lower, std::optional<Bound>& out) {
    if (const auto it = s.find(key); it != s.end()) out = Bound{decimal_of(*it, path + "/" + key), true};
    if (const auto it = s.find(exclusive_key); it != s.end()) {
      const std::string where = path + "/" + exclusive_key;
      if (it->is_boolean()) {  // draft 4: a flag on minimum / maximum
        if (!out && it->get<bool>())
          throw GrammarError(where, std::string("'") + exclusive_key + "': true needs '" + key + "'");
        if (out) out->inclusive = !it->get<bool>();
        return;
      }
      const Bound b{decimal_of(*it, where), false};
      // The tighter of the two.
      if (!out || (lower ? compare(b.value, out->value) >= 0 : compare(b.value, out->value) <= 0)) out = b;
    }
  };
  bound("minimum", "exclusiveMinimum", true, lo);
  bound("maximum", "exclusiveMaximum", false, hi);
  // ajv-formats' number formats: int32 an integer in its range, int64 any integer, float and
  // double any number. Another format is a string's, where the schema allows strings; else refused.
  if (const auto it = s.find("format"); it != s.end()) {
    const std::string name = it->is_string() ? it->get<std::string>() : "";
    if (name == "int32" || name == "int64") integer = true;
    if (name == "int32") {
      const Bound least{decimal_of(json(-2147483648LL), path), true}, most{decimal_of(json(2147483647LL), path), true};
      if (!lo || compare(least.value, lo->value) > 0) lo = least;
      if (!hi || compare(most.value, hi->value) < 0) hi = most;
    } else if (name != "int64" && name != "float" && name != "double" && !(declared_types(s) & json_types::string)) {
      throw GrammarError(path + "/format", "format " + io::json_value_for_message(*it) +
                                               " on a number cannot be enforced (int32, int64, float and double can)");
    }
  }
  const Multiple multiple = multiple_of(s, path);
  if (!lo && !hi && !s.contains("multipleOf")) return integer ? integer_any() : number_any();
  if (s.contains("multipleOf") && multiple.q > 0 && !binary_exact(multiple)) {
    // A bounded range's multiples each as validators check it; else the whole ones, where they
    // all pass (and their quotients stay below 2^53); else none can be promised.
    if (const auto texts = listed_multiples(multiple, lo, hi, integer)) {
      if (texts->empty())
        throw GrammarError(path, "no number between the schema's minimum and maximum is a multiple of its "
                                 "multipleOf as validators check it (in doubles)");
      const int32_t r = b_.add_rule("listed-multiples");
      for (const std::string& t : *texts) b_.add_alternative(r, b_.literal(t));
      return r;
    }
    if (!whole_multiples_pass(multiple))
      throw GrammarError(path + "/multipleOf",
                         concat("'multipleOf' ", io::json_value_for_message(s.at("multipleOf")),
                                " cannot be enforced without a range of at most ", kMaxListedMultiples,
                                " multiples: validators divide in doubles, where some of its multiples, whole or "
                                "not, do not come out whole"));
    integer = true;
    Int most = 1;
    for (int i = 0; i < multiple.q; ++i) most *= 10;
    most = ((Int{1} << 53) - 1) * multiple.P / most;  // |x / m| below 2^53
    const Bound top{whole_decimal(most), true}, bottom{whole_decimal(-most), true};
    if (!hi || compare(top.value, hi->value) < 0) hi = top;
    if (!lo || compare(bottom.value, lo->value) > 0) lo = bottom;
  }
  if (lo && hi) {
    const int c = compare(lo->value, hi->value);
    if (c > 0 || (c == 0 && !(lo->inclusive && hi->inclusive)))
      throw GrammarError(path, "no number lies between the schema's minimum and maximum");
  }
  const int max_whole = integer ? kBoundedDigits : kBoundedDigits - 1;
  const int32_t r = b_.add_rule(integer ? "integer-range" : "number-range");
  const Decimal zero;
  // Negative values: "-" and a magnitude in [max(-hi, 0) exclusive of 0, -lo].
  if (!lo || lo->value.negative) {
    Bound low{zero, false};
    if (hi && hi->value.negative) low = {Decimal{false, hi->value.whole, hi->value.fraction}, hi->inclusive};
    std::optional<Bound> high;
    if (lo) high = Bound{Decimal{false, lo->value.whole, lo->value.fraction}, lo->inclusive};
    if (const auto m = RangeDigits(b_, low, high, max_whole, integer, multiple).build())
      b_.add_alternative(r, {b_.bytes(ByteSet::of('-')), GrammarBuilder::ref(*m)});
  }
  // Non-negative values.
  if (!hi || !hi->value.negative) {
    const bool zero_hi_excluded = hi && compare(hi->value, zero) == 0 && !hi->inclusive;
    if (!zero_hi_excluded) {
      const Bound low = lo && !lo->value.negative ? *lo : Bound{zero, true};
      if (const auto m = RangeDigits(b_, low, hi, max_whole, integer, multiple).build())
        b_.add_alternative(r, {GrammarBuilder::ref(*m)});
    }
  }
  if (!b_.has_alternatives(r))
    throw GrammarError(path, concat("no ", integer ? "integer" : "number", " of at most ", max_whole,
                                    " digits satisfies the schema's minimum, maximum and multipleOf"));
  return r;
}

}  // namespace difftx::grammar
