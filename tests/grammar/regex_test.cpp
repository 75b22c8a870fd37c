// The regex subset (grammar/regex.h) against std::regex's ECMAScript search, which JSON Schema's
// `pattern` means: thousands of strings over a small alphabet, accepted by the grammar exactly
// when std::regex_search finds the pattern. And the constructs it refuses, by name.
#include <gtest/gtest.h>

#include <regex>

#include "grammar/automaton.h"
#include "grammar/regex.h"
#include "support/schema_check.h"

namespace difftx::grammar {
namespace {

std::shared_ptr<const Grammar> regex_grammar(const std::string& pattern, RegexMatch match = RegexMatch::search) {
  GrammarBuilder b;
  std::map<CodePointRanges, int32_t> chars;
  const int32_t root = compile_regex(
      b, pattern,
      [&](const CodePointRanges& r) {
        auto it = chars.find(r);
        if (it == chars.end()) it = chars.emplace(r, b.code_points("c", r)).first;
        return GrammarBuilder::ref(it->second);
      },
      match);
  return b.build(root);
}

TEST(Regex, MatchesWhatEcmaScriptSearchFinds) {
  const std::vector<std::string> patterns = {
      "^abc$", "abc", "^[a-z]+\\d{2,3}$", "^(foo|bar)+baz?$", "^\\w+@\\w+\\.com$", "^[^aeiou]*$",
      "x{2}y{0,2}", "^(a|b)*c$", "^\\s*\\S+$", "^[A-Z][a-z]{1,5}(\\s[A-Z][a-z]{1,5})?$", "^(?:ab)+$",
      "^.{3}$", "a|^b|c$", "^[\\d.-]+$", "^[a-c-]{2}$", "^x*?y+?$", "^(?<w>[a-z])\\.$", "\\x41|\\u0042", "^$",
      "^[\\w\\s]{0,3}$", "^(a*b?){0,3}c$"};
  const std::string alphabet = "abcfoxyzrABC@._- 0123\t";
  Rng rng(7);
  for (const std::string& p : patterns) {
    Automaton a(regex_grammar(p));
    const std::regex re(p.find("(?<") != std::string::npos ? "^([a-z])\\.$" : p);  // std::regex has no named groups
    for (int i = 0; i < 3000; ++i) {
      std::string s;
      for (uint64_t n = rng.below(9); n > 0; --n) s += alphabet[rng.below(alphabet.size())];
      if (i % 3 == 0 && i < 600) {  // also strings near the pattern's own characters
        s.clear();
        for (uint64_t n = rng.below(7); n > 0; --n) s += p[rng.below(p.size())];
      }
      ASSERT_EQ(testing::accepts(a, s), std::regex_search(s, re)) << "pattern " << p << " on '" << s << "'";
    }
  }
}

// vLLM's regex output: the whole text is one match (std::regex_match), anchors or not.
TEST(Regex, AWholeMatchIsWhatEcmaScriptMatchFinds) {
  const std::vector<std::string> patterns = {"abc", "[a-c]+x?", "(foo|bar)*", "^a|b$", "\\d{1,3}(\\.\\d{1,3}){0,2}",
                                             "(a|ab)(c|bcd)", "x*?y+"};
  const std::string alphabet = "abcdfoxyr.0123";
  Rng rng(9);
  for (const std::string& p : patterns) {
    Automaton a(regex_grammar(p, RegexMatch::whole));
    std::string ecma = p;  // ^ and $ say nothing more in a whole match; std::regex_match wants them gone
    if (p == "^a|b$") ecma = "a|b";
    const std::regex re(ecma);
    for (int i = 0; i < 2000; ++i) {
      std::string s;
      for (uint64_t n = rng.below(8); n > 0; --n) s += alphabet[rng.below(alphabet.size())];
      ASSERT_EQ(testing::accepts(a, s), std::regex_match(s, re)) << "pattern " << p << " on '" << s << "'";
    }
  }
}

// The lengths a pattern's matches may have (what lets a pattern stand beside minLength /
// maxLength): each as worked out by hand, and every match of random strings within them.
TEST(Regex, KnowsTheLengthsOfItsMatches) {
  struct Case {
    std::string pattern;
    RegexMatch match;
    int64_t min, max;
  };
  const std::vector<Case> cases = {
      {"abc", RegexMatch::whole, 3, 3},          {"[a-c]+x?", RegexMatch::whole, 1, -1},
      {"(foo|bar)*", RegexMatch::whole, 0, -1},  {"\\d{1,3}(\\.\\d{1,3}){0,2}", RegexMatch::whole, 1, 11},
      {"(a|ab)(c|bcd)", RegexMatch::whole, 2, 5}, {"x{2}y{0,2}", RegexMatch::whole, 2, 4},
      {"(ab|c){1,2}", RegexMatch::whole, 1, 4},  {"", RegexMatch::whole, 0, 0},
      {"abc", RegexMatch::search, 3, -1},        {"^abc$", RegexMatch::search, 3, 3},
      {"^a|b$", RegexMatch::search, 1, -1},      {"^(ab|c){2}$|^x$", RegexMatch::search, 1, 4},
      {"^(a{0,0}){3}$", RegexMatch::search, 0, 0}};
  const std::string alphabet = "abcdfoxyr.0123";
  Rng rng(10);
  for (const Case& c : cases) {
    GrammarBuilder b;
    MatchLengths lengths;
    compile_regex(b, c.pattern, [&](const CodePointRanges& r) { return GrammarBuilder::ref(b.code_points("c", r)); },
                  c.match, &lengths);
    EXPECT_EQ(lengths.min, c.min) << c.pattern;
    EXPECT_EQ(lengths.max, c.max) << c.pattern;
    const std::regex re(c.pattern);
    for (int i = 0; i < 3000; ++i) {
      std::string s;
      for (uint64_t n = rng.below(12); n > 0; --n) s += alphabet[rng.below(alphabet.size())];
      const bool matches = c.match == RegexMatch::whole ? std::regex_match(s, re) : std::regex_search(s, re);
      if (!matches) continue;
      const auto n = static_cast<int64_t>(s.size());
      EXPECT_TRUE(n >= lengths.min && (lengths.max < 0 || n <= lengths.max)) << c.pattern << " matches '" << s << "'";
    }
  }
}

TEST(Regex, RefusesWhatItCannotEnforceByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(?=a)b", "lookahead"},     {"(a)\\1", "backreference"}, {"\\bword", "word boundary"},
      {"a^b", "'^' that does not start"}, {"a$b", "'$' that does not end"}, {"[z-a]", "out of order"},
      {"a{2,1}", "m > n"},         {"(ab", "missing ')'"},      {"ab)", "unmatched ')'"},
      {"a**", "quantifier of a quantifier"}, {"*a", "nothing to repeat"}, {"\\p{L}", "property escape"},
      {"[a", "unterminated class"}, {"a{99999}", "exceeds the limit"}, {"\\k<x>", "named backreference"},
      {"\\q", "escape '\\q'"},    {"\xff", "not valid UTF-8"},  {std::string(200, '(') , "nested deeper"},
      {"(a*)*", "may match no text"}, {"(a|)+b", "may match no text"}, {"x(a?b?){2,}", "may match no text"},
      {"()*", "may match no text"}};
  for (const auto& [pattern, why] : cases) {
    try {
      regex_grammar(pattern);
      ADD_FAILURE() << pattern << " was accepted";
    } catch (const GrammarError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << pattern << ": " << e.what();
      EXPECT_EQ(e.where, "pattern");
    }
  }
}

}  // namespace
}  // namespace difftx::grammar
