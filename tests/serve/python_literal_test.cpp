// Python literals read back as JSON (serve/python_literal.h), and values written as Python
// literals by the JSON Schema rules (grammar/json_grammar.h, LiteralSyntax::python): what models
// write reads as Python reads it; a literal cut short reads as `more`, never as `bad`, at every
// cut; every document the Python rules let through reads back as a value that validates.
#include <gtest/gtest.h>

#include "grammar/json_grammar.h"
#include "serve/python_literal.h"
#include "support/schema_check.h"

namespace difftx::serve {
namespace {

using nlohmann::ordered_json;

// The literal that is the whole text, or why not.
std::string read_all(std::string_view text, ordered_json& out) {
  size_t i = 0;
  const Scan s = read_python_literal(text, i, out);
  if (s == Scan::more) return "more";
  if (s == Scan::bad) return "bad";
  return i == text.size() ? "" : "rest at " + std::to_string(i);
}

ordered_json read(std::string_view text) {
  ordered_json v;
  const std::string why = read_all(std::string(text) + ")", v);  // a literal is followed by a bracket's close
  EXPECT_EQ(why, "rest at " + std::to_string(text.size())) << text;
  return v;
}

TEST(PythonLiteral, ReadsWhatPythonReads) {
  EXPECT_EQ(read("None"), ordered_json(nullptr));
  EXPECT_EQ(read("True"), ordered_json(true));
  EXPECT_EQ(read("False"), ordered_json(false));
  EXPECT_EQ(read("42").dump(), "42");
  EXPECT_EQ(read("-7").dump(), "-7");
  EXPECT_EQ(read("- 7").dump(), "-7");
  EXPECT_EQ(read("+3").dump(), "3");
  EXPECT_EQ(read("0").dump(), "0");
  EXPECT_EQ(read("2.5").dump(), "2.5");
  EXPECT_EQ(read("1e3").dump(), "1000.0");  // a float in Python
  EXPECT_EQ(read("5.").dump(), "5.0");
  EXPECT_EQ(read(".25").dump(), "0.25");
  EXPECT_EQ(read("-1.5E-2").dump(), "-0.015");
  EXPECT_EQ(read("'Paris'"), ordered_json("Paris"));
  EXPECT_EQ(read("\"Paris\""), ordered_json("Paris"));
  EXPECT_EQ(read(R"('it\'s "x"')"), ordered_json("it's \"x\""));
  EXPECT_EQ(read(R"("a\nb\tc\\d\x41\u00e9\U0001F600\101\0")"), ordered_json(std::string("a\nb\tc\\dAé😀A\0", 16)));
  EXPECT_EQ(read(R"("\ud83d\ude00")"), ordered_json("😀"));  // a surrogate pair, as JSON reads it
  EXPECT_EQ(read(R"("\q\/")"), ordered_json("\\q\\/"));     // unknown escapes keep their backslash
  EXPECT_EQ(read(R"(r"C:\dir\n")"), ordered_json("C:\\dir\\n"));
  EXPECT_EQ(read(R"(u'x')"), ordered_json("x"));
  EXPECT_EQ(read("'''a\n'b'''"), ordered_json("a\n'b"));
  EXPECT_EQ(read("\"\"\"say \"hi\" \"\"\""), ordered_json("say \"hi\" "));
  EXPECT_EQ(read("''"), ordered_json(""));
  EXPECT_EQ(read("'a\\\nb'"), ordered_json("ab"));  // a line continuation
  EXPECT_EQ(read("'Zoë'"), ordered_json("Zoë"));
  EXPECT_EQ(read("[1, 'two', [None], {}]"), ordered_json::parse(R"([1, "two", [null], {}])"));
  EXPECT_EQ(read("[1, 2,]"), ordered_json::parse("[1, 2]"));
  EXPECT_EQ(read("{'z': 1, 'a': 2}").dump(), R"({"z":1,"a":2})");  // keys in the order written
  EXPECT_EQ(read("{'a': 1, \"b\": {'c': [True]}, 'a': 3}"), ordered_json::parse(R"({"a": 3, "b": {"c": [true]}})"));
  EXPECT_EQ(read("{\n  'k' :\t'v' ,\n}"), ordered_json::parse(R"({"k": "v"})"));
  EXPECT_EQ(read("[]"), ordered_json::array());
}

TEST(PythonLiteral, RefusesWhatIsNoJsonValue) {
  for (const char* text : {"none", "true", "x", "b'bytes'", "f'{x}'", "(1, 2)", "{1, 2}", "{1: 2}", "0x1F", "1j",
                           "1_000", "007", "1.2.3", "'a\nb'", "\"\\N{DASH}\"", "\"\\ud83d\"", "\"\\ude00\"",
                           "\"\\U00110000\"", "[1 2]", "{'a' 1}", "1e999", "--1", "[,]", "\"\\xZZ\""}) {
    ordered_json v;
    EXPECT_EQ(read_all(std::string(text) + ")", v), "bad") << text;
  }
  std::string deep(300, '[');
  ordered_json v;
  EXPECT_EQ(read_all(deep, v), "bad");  // nested deeper than the reader goes
}

// Streaming: every cut of a literal short of its end reads as `more` (a number: short of the
// bracket that follows it).
TEST(PythonLiteral, ALiteralCutShortIsMoreAtEveryCut) {
  for (const char* text : {"None", "-12.5e+3", "'it\\'s'", "\"\\u00e9\\U0001F600\\x41\\101\"", "r'\\d'",
                           "'''x''y'''", "\"\"\"a\"\"\"", "''", "[1, {'a': [True, None]}, \"b\",]", "{'k': -0.5}"}) {
    const std::string whole = std::string(text) + ")";
    for (size_t cut = 0; cut < std::string_view(text).size(); ++cut) {
      ordered_json v;
      EXPECT_EQ(read_all(whole.substr(0, cut), v), "more") << whole.substr(0, cut);
    }
  }
}

struct Case {
  const char* schema;
  std::vector<const char*> valid, refused;
};

const std::vector<Case> kCases = {
    {R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
        "ok": {"type": "boolean"}, "none": {"type": "null"}, "n": {"type": "number", "minimum": -2, "maximum": 2},
        "tags": {"type": "array", "items": {"enum": ["a", "é\"\\n/", null, true, {"x": [1]}]}, "maxItems": 3}},
        "required": ["name", "ok"], "additionalProperties": false})",
     {R"({"name": "Zoë\n", "ok": True})", R"({"name":"","ok":False,"none":None,"n":-1.5,"tags":[None,True,{"x":[1]}]})",
      R"({"name": "a", "ok": True, "tags": ["é\"\\n/"]})"},
     {R"({"name": "a", "ok": true})", R"({"name": "a", "ok": True, "none": null})", R"({"name": "\/", "ok": True})",
      R"({"name": 'a', "ok": True})"}},
    {R"({"type": "object", "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 9}})",
     {"{}", R"({"x": 1, "y-z": 9})"},
     {R"({"x": 10})"}},
    {R"({"type": "string", "pattern": "^[a-z]+\"$"})", {R"("ab\"")"}, {R"("ab")"}},
    {R"({"type": "string", "format": "date"})", {R"("2024-02-29")"}, {R"("2023-02-29")"}},
    {"true", {"None", "[1, {}]", R"({"a": False})"}, {"null"}},
};

TEST(PythonLiteralGrammar, EveryDocumentItLetsThroughReadsBackAndValidates) {
  Rng rng(7);
  for (const Case& c : kCases) {
    grammar::GrammarBuilder b;
    grammar::JsonGrammar j(b, {.syntax = grammar::LiteralSyntax::python});
    const int32_t root = j.schema(nlohmann::ordered_json::parse(c.schema));
    grammar::Automaton a(b.build(root));
    const ordered_json schema = ordered_json::parse(c.schema);
    int finished = 0;
    for (int i = 0; i < 150; ++i) {
      const auto doc = testing::random_document(a, rng, 0.3, 3000);
      if (!doc) continue;
      ++finished;
      ordered_json value;  // followed by a bracket's close, as in a call (a number goes on till then)
      ASSERT_EQ(read_all(*doc + ")", value), "rest at " + std::to_string(doc->size())) << c.schema << "\n" << *doc;
      ASSERT_EQ(testing::schema_violation(schema, value), "") << c.schema << "\n" << *doc;
    }
    EXPECT_GE(finished, 100) << c.schema;
    for (const char* doc : c.valid) EXPECT_TRUE(testing::accepts(a, doc)) << c.schema << "\n" << doc;
    for (const char* doc : c.refused) EXPECT_FALSE(testing::accepts(a, doc)) << c.schema << "\n" << doc;
  }
}

TEST(PythonLiteralGrammar, KeywordArgumentsTakeIdentifiersOnly) {
  const auto arguments = [](const char* schema) {
    grammar::GrammarBuilder b;
    grammar::JsonGrammar j(b, {.syntax = grammar::LiteralSyntax::python});
    return b.build(j.keyword_arguments(nlohmann::ordered_json::parse(schema)));
  };
  grammar::Automaton a(arguments(R"({"type": "object", "properties": {"city": {"type": "string"},
      "days": {"type": "integer"}}, "required": ["city"], "additionalProperties": {"type": "boolean"}})"));
  EXPECT_TRUE(testing::accepts(a, R"((city="Paris"))"));
  EXPECT_TRUE(testing::accepts(a, R"((city="Paris", days=2, extra_1=True))"));
  EXPECT_FALSE(testing::accepts(a, R"((days=2))"));
  EXPECT_FALSE(testing::accepts(a, R"((city="Paris", city=True))"));
  EXPECT_FALSE(testing::accepts(a, R"((city="Paris", class=True))"));  // a keyword
  EXPECT_FALSE(testing::accepts(a, R"((city="Paris", 1x=True))"));
  EXPECT_FALSE(testing::accepts(a, R"((city="Paris", =True))"));
  EXPECT_FALSE(testing::accepts(a, R"(("Paris"))"));
  const auto where = [&](const char* schema) {
    try {
      arguments(schema);
    } catch (const grammar::GrammarError& e) {
      return e.where;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(where(R"({"type": "object", "properties": {"first-name": {"type": "string"}}})"),
            "#/properties/first-name");
  EXPECT_EQ(where(R"({"type": "object", "properties": {"from": {"type": "string"}}})"), "#/properties/from");
  EXPECT_EQ(where(R"({"type": ["object", "null"]})"), "#/type");
  EXPECT_EQ(where(R"({"anyOf": [{"type": "object"}]})"), "#/anyOf");
}

}  // namespace
}  // namespace difftx::serve
