// JSON strings (json_grammar.h): characters with their escapes, lengths in code points, patterns
// (regex.h), the formats (date, time, date-time, uuid, email, hostname, ipv4, ipv6, uri), and keys
// that are none of a set of names.
#include <algorithm>
#include <optional>

#include "grammar/json_grammar.h"
#include "grammar/json_keywords.h"
#include "grammar/regex.h"
#include "io/json_file.h"

namespace difftx::grammar {
namespace {

using json = nlohmann::ordered_json;

// The formats written as patterns (regex.h), each a part of what the format allows that every
// validator accepts (ajv-formats' full and fast patterns; RFC 5321, 1123 and 3986 forms), its
// repetitions bounded so that a document stays short whatever writes it: an email's local part at
// most 4 dot-separated atoms of 15 characters (63 in all; RFC 5321 allows 64), host names of 1 to 3
// labels (191 characters; 253 allowed), IPv6 in full form, http(s) URIs with up to 4 path segments,
// durations with elements of at most 4 digits.
std::optional<std::string> format_pattern(std::string_view name) {
  const std::string label = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?", host = label + "(\\." + label + "){0,2}";
  const std::string octet = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  const std::string atom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,15}";
  if (name == "email") return atom + "(\\." + atom + "){0,3}@(" + label + "\\.){1,2}" + label;
  if (name == "hostname") return host;
  if (name == "ipv4") return "(" + octet + "\\.){3}" + octet;
  if (name == "ipv6") return "([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}";
  if (name == "uri") return "https?://" + host + "(/[A-Za-z0-9._~-]{1,16}){0,4}/?";
  if (name == "duration") {  // RFC 3339's ABNF, each element of 1 to 4 digits: P1Y2M3DT4H5M6S, PT36H, P2W
    const std::string n = "[0-9]{1,4}";
    const std::string time = "T(" + n + "H(" + n + "M(" + n + "S)?)?|" + n + "M(" + n + "S)?|" + n + "S)";
    const std::string date = "(" + n + "Y(" + n + "M(" + n + "D)?)?|" + n + "M(" + n + "D)?|" + n + "D)";
    return "P(" + n + "W|" + date + "(" + time + ")?|" + time + ")";
  }
  return std::nullopt;
}

// The lengths (in characters) of the texts the grammar writes for a format, or none for a format
// it does not know: fixed for date and uuid; time HH:MM:SS, a fraction of 0 to 9 digits after a
// point, and Z or +HH:MM; the pattern formats' as their patterns bound them.
std::optional<MatchLengths> format_lengths(std::string_view name) {
  if (name == "date") return MatchLengths{10, 10};
  if (name == "uuid") return MatchLengths{36, 36};
  if (name == "time") return MatchLengths{9, 24};
  if (name == "date-time") return MatchLengths{20, 35};
  const std::optional<std::string> pattern = format_pattern(name);
  if (!pattern) return std::nullopt;
  GrammarBuilder scratch;
  const Element any = GrammarBuilder::ref(scratch.code_points("c", {{0, 0x10FFFF}}));
  MatchLengths lengths;
  compile_regex(scratch, *pattern, [&](const CodePointRanges&) { return any; }, RegexMatch::whole, &lengths);
  return lengths;
}

// Whether every length of `lengths` lies within [min, max] (max -1: no limit).
bool within(const MatchLengths& lengths, int64_t min, int64_t max) {
  return lengths.min >= min && (max < 0 || (lengths.max >= 0 && lengths.max <= max));
}

// The lengths as words: "8 to 268 characters", "1 or more characters".
std::string lengths_text(const MatchLengths& l) {
  return concat(l.min, l.max < 0 ? " or more" : l.max == l.min ? "" : concat(" to ", l.max), " characters");
}

// Code points a JSON string holds as they are: everything from U+0020 but '"' and '\'.
const CodePointRanges kPlain = {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}};

CodePointRanges intersect(const CodePointRanges& a, const CodePointRanges& b) {
  CodePointRanges out;
  for (const auto& [lo, hi] : a)
    for (const auto& [l, h] : b)
      if (std::max(lo, l) <= std::min(hi, h)) out.emplace_back(std::max(lo, l), std::min(hi, h));
  std::sort(out.begin(), out.end());
  return out;
}

bool contains(const CodePointRanges& ranges, uint32_t c) {
  return std::any_of(ranges.begin(), ranges.end(), [c](const auto& r) { return r.first <= c && c <= r.second; });
}

// The escape a JSON string writes a code point below U+0020 (or '"', '\') with.
std::string escape_of(uint32_t c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: {
      static const char* hex = "0123456789abcdef";
      return std::string("\\u00") + hex[c >> 4] + hex[c & 15];
    }
  }
}

}  // namespace

Element JsonGrammar::json_char(const CodePointRanges& ranges) {
  auto it = chars_.find(ranges);
  if (it == chars_.end()) {
    const int32_t r = b_.add_rule("char");
    const CodePointRanges plain = intersect(ranges, kPlain);
    if (!plain.empty()) b_.add_alternative(r, {GrammarBuilder::ref(b_.code_points("char-plain", plain))});
    for (uint32_t c = 0; c < 0x20; ++c)
      if (contains(ranges, c)) b_.add_alternative(r, b_.literal(escape_of(c)));
    for (uint32_t c : {0x22u, 0x5Cu})
      if (contains(ranges, c)) b_.add_alternative(r, b_.literal(escape_of(c)));
    if (!b_.has_alternatives(r)) b_.add_alternative(r, {b_.bytes(ByteSet{})});  // matches nothing: pruned
    it = chars_.emplace(ranges, r).first;
  }
  return GrammarBuilder::ref(it->second);
}

// Any character of a string: as it is, or escaped (\uXXXX for any but a surrogate, so each is one
// code point and lengths count right; Python reads \/ as two characters, so its strings never
// write it).
int32_t JsonGrammar::string_char() {
  if (const auto it = shared_.find("string-char"); it != shared_.end()) return it->second;
  ByteSet hex;
  hex.add_range('0', '9'), hex.add_range('a', 'f'), hex.add_range('A', 'F');
  ByteSet hex_not_d = hex;  // a first digit that makes no surrogate
  hex_not_d.words = {};
  hex_not_d.add_range('0', '9'), hex_not_d.add_range('a', 'c'), hex_not_d.add_range('A', 'C');
  hex_not_d.add_range('e', 'f'), hex_not_d.add_range('E', 'F');
  ByteSet d, low_octal, short_escape;
  d.add('d'), d.add('D');
  low_octal.add_range('0', '7');
  for (char c : std::string(o_.syntax == LiteralSyntax::json ? "\"\\/bfnrt" : "\"\\bfnrt"))
    short_escape.add(static_cast<uint8_t>(c));
  const Element h = b_.bytes(hex), bs = b_.bytes(ByteSet::of('\\')), u = b_.bytes(ByteSet::of('u'));
  const int32_t r = b_.add_rule("string-char");
  b_.add_alternative(r, {GrammarBuilder::ref(b_.code_points("char-plain", kPlain))});
  b_.add_alternative(r, {bs, b_.bytes(short_escape)});
  b_.add_alternative(r, {bs, u, b_.bytes(hex_not_d), h, h, h});
  b_.add_alternative(r, {bs, u, b_.bytes(d), b_.bytes(low_octal), h, h});
  shared_["string-char"] = r;
  return r;
}

int32_t JsonGrammar::string_body(int64_t min, int64_t max) {
  const std::string key = concat("string-body ", min, " ", max);
  if (const auto it = shared_.find(key); it != shared_.end()) return it->second;
  const int32_t r = b_.repeat(GrammarBuilder::ref(string_char()), min, max);
  shared_[key] = r;
  return r;
}

int32_t JsonGrammar::compile_string(const json& s, const std::string& path, bool raw) {
  const auto length = [&](const char* key, int64_t fallback) {
    const auto it = s.find(key);
    if (it == s.end()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() < 0)
      throw GrammarError(child(path, key), concat("'", key, "' must be a non-negative integer, not ",
                                                  io::json_value_for_message(*it)));
    if (it->get<int64_t>() > b_.limits().max_repeat)
      throw GrammarError(child(path, key), concat("'", key, "' ", it->get<int64_t>(), " is beyond the ",
                                                  b_.limits().max_repeat, " characters that can be enforced"));
    return it->get<int64_t>();
  };
  const int64_t min = length("minLength", 0), max = length("maxLength", -1);
  if (max >= 0 && max < min)
    throw GrammarError(child(path, "maxLength"), concat("'maxLength' ", max, " is below 'minLength' ", min));
  check_least(min, child(path, "minLength"), "characters");
  const bool has_length = s.contains("minLength") || s.contains("maxLength");
  const Sequence quote = raw ? Sequence{} : Sequence{b_.bytes(ByteSet::of('"'))};
  const auto quoted = [&](const char* name, int32_t body) {
    Sequence seq = quote;
    seq.push_back(GrammarBuilder::ref(body));
    seq.insert(seq.end(), quote.begin(), quote.end());
    return b_.add_rule(name, {std::move(seq)});
  };
  if (const auto it = s.find("format"); it != s.end()) {
    if (!it->is_string()) throw GrammarError(child(path, "format"), "'format' must be a string");
    if (s.contains("pattern"))
      throw GrammarError(child(path, "pattern"), "'pattern' beside 'format' cannot be enforced");
    const std::string name = it->get<std::string>();
    const int32_t body = format(name, child(path, "format"), raw);
    // Length limits are kept where every text the format's rule writes keeps them (pydantic's
    // HttpUrl: format uri, minLength 1, maxLength 2083).
    const std::optional<MatchLengths> lengths = format_lengths(name);
    if (has_length && lengths && !within(*lengths, min, max))
      throw GrammarError(child(path, lengths->min < min ? "minLength" : "maxLength"),
                         "a length limit beside format '" + name + "' can be enforced only where it allows every " +
                             name + " the grammar writes: " + lengths_text(*lengths));
    return quoted("string-format", body);
  }
  if (const auto it = s.find("pattern"); it != s.end()) {
    if (!it->is_string()) throw GrammarError(child(path, "pattern"), "'pattern' must be a string");
    int32_t body;
    MatchLengths lengths;
    try {
      body = compile_regex(b_, it->get<std::string>(),
                           [this, raw](const CodePointRanges& r) { return raw ? raw_char(r) : json_char(r); },
                           RegexMatch::search, &lengths);
    } catch (const GrammarError& e) {
      throw GrammarError(child(path, "pattern"), e.what());
    }
    check_least(lengths.min, child(path, "pattern"), "characters");
    // Length limits are kept where the pattern's own matches keep them (^\d{5}$ with maxLength 5).
    if (has_length && !within(lengths, min, max))
      throw GrammarError(child(path, "pattern"),
                         "'pattern' beside minLength / maxLength can be enforced only where every match's length "
                         "lies within them; this one's are " + lengths_text(lengths) +
                             " (an unanchored pattern allows any text around its match)");
    return quoted("string-pattern", body);
  }
  const std::string key = concat(raw ? "raw-string " + xml_->value_end + " " : "string ", min, " ", max);
  if (const auto it = shared_.find(key); it != shared_.end()) return it->second;
  int32_t body;
  if (!raw) body = string_body(min, max);
  else if (has_length) body = b_.repeat(raw_char({{0, 0x10FFFF}}), min, max);
  else body = xml_text();
  const int32_t r = quoted("string", body);
  shared_[key] = r;
  return r;
}

int32_t JsonGrammar::format(const std::string& name, const std::string& path, bool raw) {
  // The patterns' characters may be escaped in JSON; the others' never need to be.
  const std::optional<std::string> pattern = format_pattern(name);
  const std::string key = concat("format ", name, pattern && raw ? " raw" : "");
  if (const auto it = shared_.find(key); it != shared_.end()) return it->second;
  const auto digits = [this](char lo, char hi) {
    return b_.bytes(ByteSet::range(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)));
  };
  const auto lit = [this](const char* text) { return b_.literal(text); };
  const auto cat = [](std::initializer_list<Sequence> parts) {
    Sequence out;
    for (const Sequence& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  const Element d = digits('0', '9');
  // YYYY-MM-DD with the days per month as validators check them, 29 February in leap years only.
  const auto date = [&] {
    const int32_t d31 = b_.add_rule("day31", {{b_.bytes(ByteSet::of('0')), digits('1', '9')}, {digits('1', '2'), d},
                                              {b_.bytes(ByteSet::of('3')), digits('0', '1')}});
    const int32_t d30 =
        b_.add_rule("day30", {{b_.bytes(ByteSet::of('0')), digits('1', '9')}, {digits('1', '2'), d}, lit("30")});
    const int32_t d28 = b_.add_rule("day28", {{b_.bytes(ByteSet::of('0')), digits('1', '9')},
                                              {b_.bytes(ByteSet::of('1')), d},
                                              {b_.bytes(ByteSet::of('2')), digits('0', '8')}});
    const int32_t m31 =
        b_.add_rule("month31", {lit("01"), lit("03"), lit("05"), lit("07"), lit("08"), lit("10"), lit("12")});
    const int32_t m30 = b_.add_rule("month30", {lit("04"), lit("06"), lit("09"), lit("11")});
    // Two digits divisible by 4 but 00; a leap year ends in them, or is a century divisible by 400.
    ByteSet even, odd;
    for (char c : std::string("02468")) even.add(static_cast<uint8_t>(c));
    for (char c : std::string("13579")) odd.add(static_cast<uint8_t>(c));
    const int32_t by4_exact = b_.add_rule("by4", {{b_.bytes(even), b_.bytes(ByteSet::of('4'))},
                                                  {b_.bytes(even), b_.bytes(ByteSet::of('8'))},
                                                  {b_.bytes(odd), b_.bytes(ByteSet::of('2'))},
                                                  {b_.bytes(odd), b_.bytes(ByteSet::of('6'))},
                                                  lit("20"),
                                                  lit("40"),
                                                  lit("60"),
                                                  lit("80")});
    const int32_t century400 = b_.add_rule("century400", {lit("00"), {GrammarBuilder::ref(by4_exact)}});
    const Sequence dash = lit("-");
    const int32_t r = b_.add_rule("date");
    b_.add_alternative(r, cat({{d, d, d, d}, dash, {GrammarBuilder::ref(m31)}, dash, {GrammarBuilder::ref(d31)}}));
    b_.add_alternative(r, cat({{d, d, d, d}, dash, {GrammarBuilder::ref(m30)}, dash, {GrammarBuilder::ref(d30)}}));
    b_.add_alternative(r, cat({{d, d, d, d}, lit("-02-"), {GrammarBuilder::ref(d28)}}));
    b_.add_alternative(r, cat({{d, d, GrammarBuilder::ref(by4_exact)}, lit("-02-29")}));
    b_.add_alternative(r, cat({{GrammarBuilder::ref(century400)}, lit("00-02-29")}));
    return r;
  };
  // HH:MM:SS, an optional fraction of 1 to 9 digits, then Z or +HH:MM / -HH:MM (RFC 3339's full-time).
  const auto time = [&] {
    const int32_t hour = b_.add_rule("hour", {{digits('0', '1'), d}, {b_.bytes(ByteSet::of('2')), digits('0', '3')}});
    const Element minute = GrammarBuilder::ref(b_.add_rule("minute", {{digits('0', '5'), d}}));
    const int32_t fraction = b_.repeat(d, 1, 9);
    const int32_t seconds = b_.add_rule(
        "seconds",
        {{digits('0', '5'), d}, {digits('0', '5'), d, b_.bytes(ByteSet::of('.')), GrammarBuilder::ref(fraction)}});
    ByteSet sign;
    sign.add('+'), sign.add('-');
    const int32_t zone = b_.add_rule(
        "zone", {lit("Z"), {b_.bytes(sign), GrammarBuilder::ref(hour), b_.bytes(ByteSet::of(':')), minute}});
    return b_.add_rule("time", {{GrammarBuilder::ref(hour), b_.bytes(ByteSet::of(':')), minute,
                                 b_.bytes(ByteSet::of(':')), GrammarBuilder::ref(seconds), GrammarBuilder::ref(zone)}});
  };
  int32_t r;
  if (name == "uuid") {
    ByteSet hex;
    hex.add_range('0', '9'), hex.add_range('a', 'f'), hex.add_range('A', 'F');
    const Element h = b_.bytes(hex);
    Sequence seq;
    for (int group : {8, 4, 4, 4, 12}) {
      if (!seq.empty()) seq.push_back(b_.bytes(ByteSet::of('-')));
      seq.insert(seq.end(), static_cast<size_t>(group), h);
    }
    r = b_.add_rule("uuid", {seq});
  } else if (name == "date") {
    r = date();
  } else if (name == "time") {
    r = time();
  } else if (name == "date-time") {  // the two formats' rules, shared with them
    const int32_t day = format("date", path, raw), clock = format("time", path, raw);
    r = b_.add_rule("date-time", {{GrammarBuilder::ref(day), b_.bytes(ByteSet::of('T')), GrammarBuilder::ref(clock)}});
  } else if (pattern) {
    r = compile_regex(
        b_, *pattern, [this, raw](const CodePointRanges& c) { return raw ? raw_char(c) : json_char(c); },
        RegexMatch::whole);
  } else {
    throw GrammarError(path, "format '" + name +
                                 "' is not supported (date, time, date-time, duration, uuid, email, hostname, ipv4, "
                                 "ipv6 and uri are)");
  }
  shared_[key] = r;
  return r;
}

int32_t JsonGrammar::key_other_than(const std::vector<std::string>& names) {
  const Element quote = b_.bytes(ByteSet::of('"'));
  const int32_t text =
      text_other_than(names, kPlain, kPlain, [this](const CodePointRanges& r) { return json_char(r); });
  return b_.add_rule("key", {{quote, GrammarBuilder::ref(text), quote}});
}

int32_t JsonGrammar::text_other_than(const std::vector<std::string>& names, const CodePointRanges& first,
                                     const CodePointRanges& rest,
                                     const std::function<Element(const CodePointRanges&)>& one) {
  // A trie of the names over code points; a text follows it while it matches a name, and is
  // anything once it leaves it. Names holding code points such texts never use need no exclusion.
  struct Node {
    std::map<uint32_t, int32_t> next;
    bool name = false;
  };
  std::vector<Node> nodes(1);
  for (const std::string& n : names) {
    std::vector<uint32_t> cps;
    for (size_t i = 0; i < n.size();) {
      const auto c = static_cast<uint8_t>(n[i]);
      const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      uint32_t cp = len == 1 ? c : c & (0x7F >> len);
      for (int k = 1; k < len && i + k < n.size(); ++k) cp = (cp << 6) | (static_cast<uint8_t>(n[i + k]) & 0x3F);
      i += len;
      cps.push_back(cp);
    }
    bool usable = true;
    for (size_t i = 0; i < cps.size(); ++i) usable = usable && contains(i == 0 ? first : rest, cps[i]);
    if (!usable) continue;
    int32_t at = 0;
    for (const uint32_t cp : cps) {
      const auto [it, added] = nodes[at].next.emplace(cp, static_cast<int32_t>(nodes.size()));
      if (added) nodes.emplace_back();
      at = it->second;
    }
    nodes[at].name = true;
  }
  const Element free_tail = GrammarBuilder::ref(b_.repeat(one(rest), 0, -1));
  std::vector<int32_t> rules(nodes.size());
  for (size_t i = nodes.size(); i-- > 0;) {
    rules[i] = b_.add_rule("key");
    if (!nodes[i].name) b_.add_alternative(rules[i], {});
    CodePointRanges taken;
    for (const auto& [cp, to] : nodes[i].next) {
      b_.add_alternative(rules[i], {one({{cp, cp}}), GrammarBuilder::ref(rules[to])});
      taken.emplace_back(cp, cp);
    }
    const CodePointRanges others = intersect(complement(taken), i == 0 ? first : rest);
    if (!others.empty()) b_.add_alternative(rules[i], {one(others), free_tail});
  }
  return rules[0];
}

}  // namespace difftx::grammar
