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
