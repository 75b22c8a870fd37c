// The grammar room's core: the builder's checks (undefined rules, left recursion, rules that
// cannot finish, size limits), UTF-8 classes against every code point, the lazily built automaton
// (acceptance, completeness, stacks that do not grow with repetition), and the GBNF parser
// (syntax, escapes, repetition, errors with their line and column, a round trip through to_gbnf).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "data/utf8.h"
#include "grammar/automaton.h"
#include "grammar/gbnf.h"
#include "support/schema_check.h"

namespace difftx::grammar {
namespace {

using testing::accepts;

std::string utf8(uint32_t c) {
  std::string out;
  difftx::data::append_utf8(c, out);
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "";
}

TEST(GrammarBuilder, CodePointClassesMatchExactlyTheirCodePoints) {
  // Awkward ranges: across every UTF-8 length boundary, around the surrogates, single points.
  const CodePointRanges ranges = {{0x41, 0x5A}, {0x7E, 0x81}, {0x7FF, 0x800}, {0xD7FE, 0xE001}, {0xFFFF, 0x10001},
                                  {0x10FFFE, 0x10FFFF}, {0x3B1, 0x3C9}};
  GrammarBuilder b;
  Automaton a(b.build(b.code_points("class", ranges)));
  for (uint32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;  // not encodable
    bool in = false;
    for (const auto& [lo, hi] : ranges) in = in || (lo <= c && c <= hi && !(c >= 0xD800 && c <= 0xDFFF));
    ASSERT_EQ(accepts(a, utf8(c)), in) << "U+" << std::hex << c;
  }
  // Surrogates' three-byte forms (CESU-8) and overlong forms never match.
  GrammarBuilder all;
  Automaton any(all.build(all.code_points("any", {{0, 0x10FFFF}})));
  EXPECT_FALSE(accepts(any, "\xED\xA0\x80"));
  EXPECT_FALSE(accepts(any, "\xC0\xAF"));
  EXPECT_FALSE(accepts(any, "\xE0\x80\xAF"));
  EXPECT_FALSE(accepts(any, "\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_TRUE(accepts(any, "\xF4\x8F\xBF\xBF"));
}

// Free text before markers: every text over a small alphabet up to six bytes is taken exactly
// when no marker occurs in it (overlapping ones, one inside another's prefix) and, for several,
// its first byte is allowed.
TEST(GrammarBuilder, TextWithoutMarkersTakesExactlyTheTextsWithoutThem) {
  const std::vector<std::string_view> markers = {"abab", "ba", "cab"};
  const std::string_view alphabet = "abcx";
  ByteSet first;
  for (int c = 0; c < 256; ++c)
    if (c != 'x') first.add(static_cast<uint8_t>(c));
  GrammarBuilder b;
  const int32_t several = b.text_without(markers, first);
  const int32_t one = b.text_without("aab")[0];
  Automaton a_several(b.build(several)), a_one(b.build(one));
  std::vector<std::string> texts = {""};
  for (size_t from = 0, length = 1; length <= 6; ++length) {
    const size_t to = texts.size();
    for (size_t k = from; k < to; ++k)
      for (const char c : alphabet) texts.push_back(texts[k] + c);
    from = to;
  }
  for (const std::string& text : texts) {
    const bool has = std::any_of(markers.begin(), markers.end(),
                                 [&](std::string_view m) { return text.find(m) != std::string::npos; });
    ASSERT_EQ(accepts(a_several, text), !has && !text.starts_with('x')) << text;
    ASSERT_EQ(accepts(a_one, text), text.find("aab") == std::string::npos) << text;
  }
  EXPECT_NE(error_of([&] { b.text_without({"a", ""}, first); }).find("an empty marker"), std::string::npos);
}

TEST(GrammarBuilder, RefusesUndefinedRulesLeftRecursionAndGrammarsThatCannotFinish) {
  {
    GrammarBuilder b;
    const int32_t root = b.add_rule("root");
    b.add_alternative(root, {GrammarBuilder::ref(b.add_rule("missing"))});
    EXPECT_NE(error_of([&] { b.build(root); }).find("rule 'missing' is not defined"), std::string::npos);
  }
  {  // root ::= opt root "x" with opt nullable: left recursion through a nullable prefix
    GrammarBuilder b;
    const int32_t root = b.add_rule("root"), opt = b.add_rule("opt");
    b.add_alternative(opt, {});
    b.add_alternative(opt, b.literal("a"));
    Sequence s = {GrammarBuilder::ref(opt), GrammarBuilder::ref(root)};
    const Sequence x = b.literal("x");
    s.insert(s.end(), x.begin(), x.end());
    b.add_alternative(root, s);
    b.add_alternative(root, b.literal("y"));
    EXPECT_NE(error_of([&] { b.build(root); }).find("left-recursive: root -> root"), std::string::npos);
  }
  {  // only an infinite derivation
    GrammarBuilder b;
    const int32_t root = b.add_rule("root");
    Sequence s = b.literal("a");
    s.push_back(GrammarBuilder::ref(root));
    b.add_alternative(root, s);
    EXPECT_NE(error_of([&] { b.build(root); }).find("matches no text"), std::string::npos);
  }
  {  // an alternative that cannot finish is dropped; the rest stays
    GrammarBuilder b;
    const int32_t root = b.add_rule("root"), never = b.add_rule("never");
    Sequence loop = b.literal("n");
    loop.push_back(GrammarBuilder::ref(never));
    b.add_alternative(never, loop);
    Sequence with = b.literal("a");
    with.push_back(GrammarBuilder::ref(never));
    b.add_alternative(root, with);
    b.add_alternative(root, b.literal("b"));
    Automaton a(b.build(root));
    EXPECT_TRUE(accepts(a, "b"));
    EXPECT_LT(a.next(a.start(), 'a'), 0);  // no dead end: "a" is refused at once
  }
  {
    GrammarLimits limits;
    limits.max_elements = 100;
    GrammarBuilder b(limits);
    EXPECT_NE(error_of([&] { b.add_rule("r", {b.literal(std::string(200, 'x'))}); }).find("beyond 100 elements"),
              std::string::npos);
    EXPECT_NE(error_of([&] { b.repeat(b.bytes(ByteSet::of('a')), 0, 20000); }).find("exceeds the limit"),
              std::string::npos);
  }
}

// A schema's maxLength 10000 or a regex's {0,10000} makes thousands of rules of one name: each gets
// its own name at once (searching the suffixes from 1 each time made such a grammar take 14 s).
TEST(GrammarBuilder, ManyRulesOfOneNameAreNamedQuickly) {
  GrammarBuilder b;
  const auto start = std::chrono::steady_clock::now();
  std::set<std::string> names;
  const int32_t first = b.add_rule("tail");
  int32_t last = first;
  for (int i = 0; i < 20000; ++i) {
    const int32_t r = b.add_rule("tail");
    b.add_alternative(last, {b.bytes(ByteSet::of('a')), GrammarBuilder::ref(r)});
    last = r;
  }
  b.add_alternative(last, {});
  const auto grammar = b.build(first);
  for (int32_t r = 0; r < grammar->rules(); ++r) names.insert(grammar->name(r));
  EXPECT_EQ(names.size(), static_cast<size_t>(grammar->rules()));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  GrammarBuilder taken;  // a name GBNF gave a rule is skipped
  taken.named_rule("x-1");
  taken.add_rule("x");
  EXPECT_EQ(taken.add_rule("x"), 2);
  taken.add_alternative(2, {});
  EXPECT_EQ(taken.build(2)->name(0), "x-2");
}

TEST(Automaton, RepetitionKeepsTheStackFlatAndStatesRepeat) {
  // A long run of one repeated rule reuses one state: the stack does not grow per repetition.
  const auto g = parse_gbnf(R"(root ::= "[" item ("," item)* "]"
item ::= [a-z]+)");
  Automaton a(g);
  std::string text = "[";
  for (int i = 0; i < 2000; ++i) text += (i ? ",ab" : "ab");
  text += "]";
  EXPECT_TRUE(accepts(a, text));
  EXPECT_LT(a.states(), 20);
  EXPECT_FALSE(accepts(a, "[ab,]"));
  EXPECT_FALSE(accepts(a, "[ab"));
  const auto s = a.next(a.start(), "[ab");
  EXPECT_TRUE(a.extensible(s));
  EXPECT_FALSE(a.complete(s));
  EXPECT_LT(a.next(s, 'A'), 0);
}

TEST(Automaton, DeepNestingIsRefusedBeyondTheDepthLimitNotAStackOverflow) {
  const auto g = parse_gbnf(R"g(root ::= "(" root ")" | "x")g");
  AutomatonLimits limits;
  limits.max_depth = 50;
  Automaton a(g, limits);
  EXPECT_TRUE(accepts(a, std::string(40, '(') + "x" + std::string(40, ')')));
  auto s = a.next(a.start(), std::string(5000, '('));
  EXPECT_LT(s, 0);
}

// At the depth limit an opening byte whose rule could not finish within it is never offered:
// going as deep as the automaton lets it, every state still has a byte that leads on, until the
// text is complete.
TEST(Automaton, AtTheDepthLimitEveryLiveStateCanStillFinish) {
  // After "(" the optional space is one rule deep, "<" too, the root inside it two: a limit that
  // falls between them (either parity) once let "(" through to a dead end.
  const auto g = parse_gbnf(R"g(root ::= "(" " "? inner ")" | "x"
inner ::= "<" root ">")g");
  for (const int32_t depth : {50, 51}) {
    AutomatonLimits limits;
    limits.max_depth = depth;
    Automaton a(g, limits);
    std::string text;
    Automaton::State s = a.start();
    while (!a.complete(s)) {
      Automaton::State next = Automaton::kDead;
      for (const char c : std::string("(< x>)"))  // deeper first
        if ((next = a.next(s, static_cast<uint8_t>(c))) >= 0) {
          text += c;
          break;
        }
      ASSERT_GE(next, 0) << depth << ": " << text;
      s = next;
    }
    EXPECT_GE(std::count(text.begin(), text.end(), '('), 20) << depth;
  }
}

TEST(Gbnf, ParsesLiteralsClassesGroupsAndRepetitions) {
  const auto g = parse_gbnf(R"(# a comment
root  ::= greeting ws name ("!" | "?")? tail
greeting ::= "h\x65llo" | "\u00e9t\u00E9"   # escapes
ws ::= [ \t]{1,3}
name ::= [A-Z] [^ !?\n0-9]{0,4}
tail ::= ( [0-9]{2} | "." ){0,2}
)");
  Automaton a(g);
  for (const char* ok : {"hello Bob", "été  Zoë!", "hello X?12.", "hello\tABCDE"})
    EXPECT_TRUE(accepts(a, ok)) << ok;
  for (const char* bad : {"hello bob", "hello    Bob", "hello ABCDEF", "hello B1", "hello X?123", "hello X!!"})
    EXPECT_FALSE(accepts(a, bad)) << bad;
}

TEST(Gbnf, ErrorsNameTheLineAndColumn) {
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"a\"\nx ::= [a-\n"); }).find("line 2"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= b"); }).find("rule 'b' is not defined"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= root \"a\" | \"b\""); }).find("left-recursive"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= (\"a\"?)* \"b\""); }).find("may match no text, as in (x?)*"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"a\"\nroot ::= \"b\""); }).find("defined twice"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= (\"a\""); }).find("expected ')'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"a\"{3,1}"); }).find("m <= n"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"\\q\""); }).find("unknown escape"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf(""); }).find("no rules"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf(std::string(5000, '(')); }).find("expected a rule name"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= " + std::string(5000, '(')); }).find("nested deeper"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"a\"{99999}"); }).find("beyond the limit"), std::string::npos);
  // As llama.cpp refuses them: no root (a typo), and a rule used but never defined where root
  // does not reach it.
  EXPECT_NE(error_of([] { parse_gbnf("rot ::= \"a\""); }).find("no 'root' rule"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"a\"\nunused ::= zzz"); }).find("line 2 column 12: rule 'zzz' is not defined"),
            std::string::npos);
}

// llama.cpp's own grammars start a rule's body on the line after ::= (grammars/json.gbnf) and
// may put spaces before a repetition operator.
TEST(Gbnf, ABodyOnTheNextLineAndSpacesBeforeOperators) {
  const auto g = parse_gbnf("root ::=\n  \"a\" b * |\n  \"c\" {2}\nb ::=\n\n  \"b\"\n");
  Automaton a(g);
  for (const char* ok : {"a", "abbb", "cc"}) EXPECT_TRUE(accepts(a, ok)) << ok;
  for (const char* bad : {"c", "ccc", "ba", "ab c"}) EXPECT_FALSE(accepts(a, bad)) << bad;
  // A newline still ends a top-level sequence: an operator on the next line is not the item's.
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"a\"\n*"); }).find("line 2"), std::string::npos);
}

TEST(Gbnf, ToGbnfReadsBackAsTheSameLanguage) {
  const auto g = parse_gbnf(R"(root ::= "{" (pair ("," pair)*)? "}"
pair ::= "\"" [a-z_]+ "\":" [0-9]{1,3})");
  const auto again = parse_gbnf(g->to_gbnf());
  Automaton a(g), b(again);
  for (const char* text : {"{}", "{\"ab\":1}", "{\"ab\":12,\"c_d\":999}", "{\"ab\":1234}", "{\"A\":1}", "{,}"})
    EXPECT_EQ(accepts(a, text), accepts(b, text)) << text << "\n" << g->to_gbnf();
}

}  // namespace
}  // namespace difftx::grammar
