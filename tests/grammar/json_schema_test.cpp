// JSON Schema -> grammar (grammar/json_grammar.h): every document the grammar lets through is
// valid JSON without repeated keys and validates against the schema (the tests' own validator,
// support/schema_check.h, written from the specification), for random documents the automaton
// writes byte by byte; hand-written valid documents are accepted and invalid ones refused;
// number ranges and dates checked value by value; hostile schemas refused with the keyword's path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/timer.h"
#include "grammar/json_grammar.h"
#include "io/json_file.h"
#include "support/schema_check.h"

namespace difftx::grammar {
namespace {

using nlohmann::json;
using testing::accepts;

struct Case {
  const char* schema;
  std::vector<const char*> valid, refused;  // refused: invalid, or outside the subset the grammar writes
};

const std::vector<Case> kCases = {
    {R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "é\"\\n"]}, "maxItems": 3},
        "ok": {"type": "boolean"}, "when": {"type": "string", "format": "date"}},
        "required": ["name", "age"], "additionalProperties": false})",
     {R"({"name": "Zoë", "age": 7})", R"({"name":"","age":120,"tags":["a","é\"\\n"],"ok":false,"when":"2024-02-29"})",
      "{\n  \"name\": \"x\",\n  \"age\": 0\n}"},
     {R"({"age": 7})", R"({"name": "x", "age": 121})", R"({"name": "123456789", "age": 1})",
      R"({"name": "x", "age": 1, "when": "2023-02-29"})", R"({"name": "x", "age": 1, "extra": 1})",
      R"({"name": "x", "age": 1.5})", R"({"name": "x", "age": 1, "tags": ["c"]})",
      "{\"name\": \"x\",\n\n \"age\": 1}"}},
    {R"({"type": ["string", "null"], "maxLength": 3})", {"null", R"("abc")", R"("\u00e9\n")"}, {R"("abcd")", "1"}},
    // nullable as ajv reads it: null one more type, so beside an enum only where the enum lists it.
    {R"({"type": "string", "enum": ["x"], "nullable": true})", {R"("x")"}, {"null"}},
    {R"({"type": "integer", "enum": [1, null], "nullable": true})", {"1", "null"}, {"2"}},
    {R"({"type": "string", "maxLength": 1, "nullable": true})", {"null", R"("a")"}, {R"("ab")"}},
    // ajv-formats' number formats; $id at the root only.
    {R"({"$id": "http://example.com/s", "type": "integer", "format": "int32"})",
     {"2147483647", "-2147483648", "0"}, {"2147483648", "-2147483649", "3337703777331273"}},
    {R"({"type": "integer", "format": "int32", "minimum": -5})", {"-5", "2147483647"}, {"-6", "2147483648"}},
    {R"({"type": "number", "format": "int64"})", {"3337703777331273", "-1"}, {"1.5"}},
    {R"({"type": "number", "format": "double", "maximum": 1})", {"0.5", "1"}, {"1.5"}},
    // OpenAPI's nullable and example, editors' and extension annotations (tool definitions carry them).
    {R"({"type": "object", "properties": {"n": {"type": "integer", "nullable": true, "example": 3, "x-order": 1},
        "s": {"enum": ["a", "b"], "nullable": false, "enumDescriptions": ["A", "B"]}}, "required": ["n"],
        "additionalProperties": false, "x-tool": {"a": 1}, "markdownDescription": "m"})",
     {R"({"n": null})", R"({"n": 5, "s": "b"})"}, {R"({"n": "x"})", "{}", R"({"n": 1, "s": null})"}},
    {R"({"$defs": {"pt": {"type": "object", "properties": {"x": {"type": "number", "minimum": -1.5,
        "exclusiveMaximum": 2.25}}, "required": ["x"], "additionalProperties": false}},
        "oneOf": [{"$ref": "#/$defs/pt"}, {"type": "array", "items": {"$ref": "#/$defs/pt"}, "maxItems": 2},
        {"type": "null"}]})",
     {R"({"x": -1.5})", R"([{"x": 2.2499}, {"x": 0}])", "null", "[]"},
     {R"({"x": 2.25})", R"({"x": -1.51})"}},
    {R"({"type": "object", "properties": {"v": {"type": "integer", "exclusiveMinimum": -3, "maximum": 3},
        "kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}}, "required": ["v"]})",
     {R"({"v": -2, "kids": [{"v": 3}, {"v": 0, "kids": []}]})"},
     {R"({"v": -3})", R"({"v": 1, "kids": [{}]})"}},
    {R"({"type": "string", "pattern": "^[a-z]{2,4}-\\d{2}$"})", {R"("ab-12")"}, {R"("a-12")", R"("abcde-12")"}},
    // Length limits every text of the format keeps: pydantic's HttpUrl.
    {R"({"type": "string", "format": "uri", "minLength": 1, "maxLength": 2083})", {R"("https://example.com/a/b")"},
     {R"("example.com")", R"("")"}},
    {R"({"type": "string", "format": "date-time", "maxLength": 40})", {R"("2024-02-29T23:59:59.123Z")"}, {R"("x")"}},
    // A pattern beside length limits its own matches keep.
    {R"({"type": "string", "pattern": "^[0-9]{5}$", "minLength": 5, "maxLength": 5})", {R"("01234")"},
     {R"("0123")", R"("012345")", R"("a1234")"}},
    {R"({"type": "string", "pattern": "^(ab|c){1,2}$", "maxLength": 4})", {R"("c")", R"("abab")", R"("cab")"},
     {R"("")", R"("abc c")"}},
    {R"({"type": "string", "pattern": "^q\"\\\\"})", {R"("q\"\\")", R"("q\"\\ yy")"}, {R"("q\"")", R"("xx q\"\\")"}},
    {R"({"type": "string", "format": "date-time"})",
     {R"("2024-02-29T23:59:59.123Z")", R"("1999-12-31T00:00:00+05:30")"},
     {R"("2024-02-29T24:00:00Z")", R"("2024-02-29T12:00:00")"}},
    {R"({"type": "string", "format": "uuid"})", {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567")"}},
    {R"({"type": "string", "format": "time"})", {R"("23:59:59.5Z")", R"("00:00:00-08:00")"},
     {R"("24:00:00Z")", R"("12:00:00")", R"("12:00Z")"}},
    {R"({"type": "string", "format": "email"})", {R"("a.b+c@example.com")", R"("x_y@mail.example.org")"},
     {R"("a..b@example.com")", R"("ab@localhost")", R"("@example.com")", R"("a@-x.com")"}},
    {R"({"type": "string", "format": "hostname"})", {R"("example.com")", R"("a-1")"},
     {R"("-a.com")", R"("a..b")", R"("a_b.com")"}},
    {R"({"type": "string", "format": "ipv4"})", {R"("192.168.0.1")", R"("255.255.255.0")"},
     {R"("256.1.1.1")", R"("01.2.3.4")", R"("1.2.3")"}},
    {R"({"type": "string", "format": "ipv6"})", {R"("2001:db8:0:0:0:0:2:1")"},
     {R"("2001:db8::2:1")", R"("2001:db8:0:0:0:0:2")", R"("12345::")"}},
    {R"({"type": "string", "format": "uri"})", {R"("https://example.com/a/b.html")", R"("http://x/")"},
     {R"("example.com")", R"("https://exa mple.com")"}},
    {R"({"type": "string", "format": "duration"})", {R"("P1W")", R"("P3Y6M4DT12H30M5S")", R"("PT36H")", R"("P1D")",
     R"("PT0S")", R"("P1MT1M")"},
     {R"("P")", R"("PT")", R"("P1Y2D")", R"("1D")", R"("P1H")", R"("P1W2D")", R"("PT1H5S")"}},
    {R"({"enum": [1, "two", null, true, {"a": [1, 2]}, [3], 2.5, "ü\n"]})",
     {"1", R"("two")", "null", "true", R"({"a":[1,2]})", "[3]", "2.5", R"("ü\n")"},
     {"2", R"({"a": [1, 2]})"}},
    {R"({"type": "object", "properties": {"a": {"const": 1}}, "required": ["a"],
        "additionalProperties": {"type": "integer", "minimum": 5, "maximum": 6}})",
     {R"({"a": 1})", R"({"a": 1, "b": 5, "ab": 6})"},
     {R"({"a": 1, "a": 5})", R"({"a": 1, "b": 7})"}},
    {R"({"type": "number", "minimum": 0.1, "maximum": 0.3})", {"0.1", "0.3", "0.25", "0.30000"}, {"0.09", "0.31", "1"}},
    {R"({"type": "number", "exclusiveMinimum": -1, "exclusiveMaximum": 0})", {"-0.5", "-0.999"}, {"-1", "0", "-1.0"}},
    {R"({"type": "integer", "minimum": -1000000, "maximum": -999990})",
     {"-999995", "-1000000"},
     {"-999989", "-1000001"}},
    {R"({"type": "string", "minLength": 2, "maxLength": 3})",
     {R"("ab")", R"("äöü")", R"("\n\"")"},
     {R"("a")", R"("abcd")"}},
    {R"({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "boolean"}}})",
     {"{}", R"({"a": null})", R"({"b": true})", R"({"a": null, "b": false})"},
     {R"({"b": true, "a": null})"}},
    {R"({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 3}, "minItems": 2, "maxItems": 4})",
     {"[1, 2]", "[3,3,3,3]"},
     {"[1]", "[1,2,3,1,2]", "[0, 1]"}},
    {R"({"anyOf": [{"type": "integer", "minimum": 10}, {"type": "string", "maxLength": 1}], "description": "x"})",
     {"10", "\"\""},
     {"9"}},
    {R"({"type": "object"})", {"{}", R"({"x": [1, {"y": null}], "z": "w"})"}, {"[]"}},
    // Pydantic's discriminated union: oneOf of $refs told apart by a required const, and OpenAPI's
    // discriminator naming that property.
    {R"({"$defs": {"Cat": {"properties": {"kind": {"const": "cat", "type": "string"}, "n": {"type": "integer",
        "minimum": 0, "maximum": 9}}, "required": ["kind", "n"], "type": "object", "additionalProperties": false},
        "Dog": {"properties": {"kind": {"const": "dog", "type": "string"}, "x": {"type": "boolean"}},
        "required": ["kind", "x"], "type": "object", "additionalProperties": false}},
        "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
        "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}})",
     {R"({"kind": "cat", "n": 3})", R"({"kind": "dog", "x": true})"},
     {R"({"kind": "cat", "x": true})", R"({"kind": "bird", "n": 1})", R"({"n": 1})"}},
    // Tuples: pydantic's tuple[int, str] (prefixItems, the counts fixed); a prefix with more items
    // after it; draft 7's items list with additionalItems; a prefix longer than maxItems.
    {R"({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string", "maxLength": 2}], "minItems": 2,
        "maxItems": 2})",
     {R"([1, "ab"])", R"([-3,""])"},
     {"[1]", R"(["ab", 1])", R"([1, "ab", 2])", "[]"}},
    {R"({"type": "array", "prefixItems": [{"const": "x"}], "items": {"type": "boolean"}, "maxItems": 3})",
     {"[]", R"(["x"])", R"(["x", true, false])"},
     {R"([true])", R"(["x", 1])", R"(["x", true, true, true])"}},
    {R"({"type": "array", "items": [{"type": "null"}, {"type": "integer", "minimum": 0, "maximum": 9}],
        "additionalItems": false, "minItems": 1})",
     {"[null]", "[null, 7]"},
     {"[]", "[null, 7, 8]", "[7]"}},
    {R"({"type": "array", "items": {"type": "null"}, "additionalItems": false, "maxItems": 2})",
     {"[]", "[null, null]"},
     {"[1]"}},
    {R"({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}, {"type": "integer"}],
        "maxItems": 2})",
     {"[]", "[1]", "[1, 2]"},
     {"[1, 2, 3]"}},
    {"true", {"1", "[]", R"({"a": "b"})"}, {"nul"}},
    // uniqueItems over an enum (pydantic's set of an Enum), booleans, a $ref'd enum with equal
    // values in it; the values in the enum's order.
    {R"({"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": true})",
     {"[]", R"(["a"])", R"(["a", "c"])", R"(["a","b","c"])"},
     {R"(["a", "a"])", R"(["c", "a"])", R"(["d"])"}},
    {R"({"type": "array", "items": {"type": "boolean"}, "uniqueItems": true, "minItems": 1, "maxItems": 1})",
     {"[false]", "[true]"},
     {"[]", "[false, true]"}},
    {R"({"$defs": {"C": {"enum": [1, 1.0, 2, "x"], "title": "C"}}, "type": "array", "items": {"$ref": "#/$defs/C"},
        "uniqueItems": true, "minItems": 2})",
     {"[1, 2]", R"([1, "x"])", R"([2, "x"])", R"([1, 2, "x"])"},
     {"[1]", "[2, 1]", "[1, 1.0]"}},
    // allOf, merged: a $ref'd base with more properties (one of its bounds tightened); a branch's
    // anyOf distributed; types and bounds intersected; enums intersected; additionalProperties
    // false keeping only the names of its own schema.
    {R"({"$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1, "maximum": 99}},
        "required": ["id"]}},
        "allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"name": {"type": "string", "maxLength": 4},
        "id": {"maximum": 50}}, "required": ["name"]}]})",
     {R"({"id": 5, "name": "ab"})", R"({"id": 50, "name": ""})"},
     {R"({"id": 51, "name": "a"})", R"({"id": 5})", R"({"name": "a"})", R"({"id": 5, "name": "abcde"})"}},
    {R"({"type": "object", "allOf": [{"properties": {"n": {"type": "integer", "minimum": 0, "maximum": 9}},
        "required": ["n"]}, {"anyOf": [{"properties": {"a": {"const": true}}, "required": ["a"]},
        {"properties": {"b": {"type": "null"}}, "required": ["b"]}]}]})",
     {R"({"n": 1, "a": true})", R"({"n": 0, "b": null})"},
     {R"({"n": 1})", R"({"a": true})", R"({"n": 1, "a": false})"}},
    {R"({"allOf": [{"type": ["integer", "string"]}, {"type": "number", "minimum": 2, "maximum": 5}, {"maximum": 4}]})",
     {"2", "4"},
     {"5", "1", R"("a")", "2.5"}},
    {R"({"allOf": [{"enum": ["a", "b", "c"]}, {"enum": ["c", "b", "d"]}]})", {R"("b")", R"("c")"}, {R"("a")", R"("d")"}},
    // Choices in two schemas of an allOf: every pair of their branches.
    {R"({"type": "object", "allOf": [
        {"oneOf": [{"properties": {"k": {"const": "a"}, "a": {"type": "integer"}}, "required": ["k", "a"]},
                   {"properties": {"k": {"const": "b"}, "b": {"type": "null"}}, "required": ["k", "b"]}]},
        {"anyOf": [{"properties": {"c": {"type": "boolean"}}, "required": ["c"]},
                   {"properties": {"d": {"type": "integer", "minimum": 0}}, "required": ["d"]}]}]})",
     {R"({"k": "a", "a": 1, "c": true})", R"({"k": "b", "b": null, "d": 0})"},
     {R"({"k": "a", "a": 1})", R"({"k": "b", "b": null, "d": -1})", R"({"k": "a", "b": null, "c": true})"}},
    // Products of distributed choices without a type in common are left out, the others kept.
    {R"({"allOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"oneOf": [{"type": "integer", "maximum": 3}, {"type": "boolean"}, {"type": "string", "maxLength": 1}]}]})",
     {"3", "-7", R"("a")"},
     {"4", "true", R"("ab")"}},
    // Members counted: listed properties, required ones among them, additional ones after them.
    {R"({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "null"}, "c": {"type": "null"}},
        "required": ["b"], "minProperties": 2, "maxProperties": 2})",
     {R"({"a": null, "b": null})", R"({"b": null, "c": null})"},
     {R"({"b": null})", R"({"a": null, "b": null, "c": null})", "{}"}},
    // pydantic's dict[str, int] = Field(min_length=1, max_length=3)
    {R"({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1, "maxProperties": 3})",
     {R"({"x": 1})", R"({"x": 1, "y": 2, "z": 3})"},
     {"{}", R"({"w": 0, "x": 1, "y": 2, "z": 3})", R"({"x": "1"})"}},
    {R"({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 5}, "x": {"type": "number",
        "multipleOf": 0.5, "maximum": 10}, "p": {"type": "number", "multipleOf": 0.97}}})",
     {R"({"n": -15, "x": 9.5, "p": 194})", R"({"x": -0.5})", R"({"p": -97})"},
     {R"({"n": 3})", R"({"x": 10.5})", R"({"x": 0.25})", R"({"p": 0.98})", R"({"p": 1.94})"}},
    // pydantic's dict[Subject, int] of an Enum: its schema by $ref; and names of any string
    {R"({"$defs": {"Subject": {"enum": ["math", "art"], "title": "Subject", "type": "string"}},
        "type": "object", "properties": {"s": {"type": "object", "additionalProperties": {"type": "integer"},
        "propertyNames": {"$ref": "#/$defs/Subject"}}, "t": {"type": "object", "maxProperties": 1,
        "additionalProperties": {"type": "null"}, "propertyNames": {"type": "string"}}}})",
     {R"({"s": {"math": 1, "art": 2}, "t": {"k": null}})"},
     {R"({"s": {"music": 1}})", R"({"t": {"a": null, "b": null}})"}},
    // pydantic's dict[Literal["x", "y", "z"], int]; zod's z.record(z.enum([...]), ...)
    {R"({"type": "object", "additionalProperties": {"type": "integer"}, "propertyNames": {"enum": ["x", "y", "z"]}})",
     {"{}", R"({"x": 1, "z": 3})", R"({"x": 1, "y": 2, "z": 3})"},
     {R"({"w": 1})", R"({"x": "1"})", R"({"x": 1, "x": 2})"}},
    {R"({"type": "object", "properties": {"y": {"type": "null"}, "q": {"type": "null"}}, "required": ["y"],
        "additionalProperties": {"type": "boolean"}, "propertyNames": {"type": "string", "enum": ["x", "y", 3]},
        "minProperties": 2})",
     {R"({"y": null, "x": true})"},
     {R"({"y": null})", R"({"y": null, "q": null})", R"({"x": true})"}},
    {R"({"allOf": [{"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "null"}, "c": {"type": "null"}}},
        {"minProperties": 2}, {"maxProperties": 3, "minProperties": 1}]})",
     {R"({"a": null, "c": null})", R"({"a": null, "b": null, "c": null})"},
     {R"({"b": null})", "{}"}},
    // Additional keys may repeat one another: toward minProperties they count as one at most.
    {R"({"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": {"type": "boolean"},
        "minProperties": 2})",
     {R"({"id": 1, "p": true})", R"({"id": 1, "p": true, "q": false})"},
     {R"({"id": 1})", R"({"p": true, "q": false})", "{}"}},
    {R"({"allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 3},
        "b": {"type": "boolean"}}, "additionalProperties": false},
        {"properties": {"a": {"minimum": 1}, "c": {"type": "null"}}, "required": ["a"]}]})",
     {R"({"a": 1})", R"({"a": 3, "b": false})"},
     {R"({"a": 0})", R"({"b": true})", R"({"a": 1, "c": null})"}},
};

TEST(JsonSchemaGrammar, EveryDocumentItLetsThroughValidates) {
  Rng rng(11);
  for (const Case& c : kCases) {
    const json schema = json::parse(c.schema);
    Automaton a(json_schema_grammar(nlohmann::ordered_json::parse(c.schema)));
    int finished = 0;
    for (int i = 0; i < 150; ++i) {
      const auto doc = testing::random_document(a, rng, 0.3, 3000);
      if (!doc) continue;
      ++finished;
      json value;
      ASSERT_NO_THROW(value = io::parse_json_text(*doc, "document")) << c.schema << "\n" << *doc;
      ASSERT_EQ(testing::schema_violation(schema, value), "") << c.schema << "\n" << *doc;
    }
    EXPECT_GE(finished, 100) << c.schema;
  }
}

TEST(JsonSchemaGrammar, AcceptsValidDocumentsAndRefusesInvalidOnes) {
  for (const Case& c : kCases) {
    const json schema = json::parse(c.schema);
    Automaton a(json_schema_grammar(nlohmann::ordered_json::parse(c.schema)));
    for (const char* doc : c.valid) {
      EXPECT_EQ(testing::schema_violation(schema, json::parse(doc)), "") << doc;  // the case itself is right
      EXPECT_TRUE(accepts(a, doc)) << c.schema << "\n" << doc;
    }
    for (const char* doc : c.refused) EXPECT_FALSE(accepts(a, doc)) << c.schema << "\n" << doc;
  }
}

// A recursive schema walked as deep as the automaton's depth limit lets it: every state on the
// way has a byte that leads on, until the document is complete, and it validates.
TEST(JsonSchemaGrammar, ARandomWalkAtTheDepthLimitAlwaysFinishes) {
  const json schema = json::parse(R"({"type": "object", "properties": {"kids": {"type": "array",
      "items": {"$ref": "#"}, "maxItems": 2}, "n": {"type": "integer"}}, "required": ["kids"]})");
  AutomatonLimits limits;
  limits.max_depth = 120;
  Automaton a(json_schema_grammar(nlohmann::ordered_json(schema)), limits);
  Rng rng(5);
  for (int i = 0; i < 20; ++i) {
    std::string doc;
    Automaton::State s = a.start();
    bool deepest = false;  // an array or object could have opened but none may: on to close them
    while (!a.complete(s)) {
      std::vector<std::pair<char, Automaton::State>> next;
      for (int b = 0; b < 256; ++b)
        if (const auto t = a.next(s, static_cast<uint8_t>(b)); t >= 0) next.emplace_back(static_cast<char>(b), t);
      ASSERT_FALSE(next.empty()) << doc;
      const auto opens = [](const auto& n) { return n.first == '[' || n.first == '{'; };
      const auto closes = [](const auto& n) { return n.first == ']' || n.first == '}'; };
      const auto deeper = std::find_if(next.begin(), next.end(), opens);
      const auto up = std::find_if(next.begin(), next.end(), closes);
      deepest = deepest || (deeper == next.end() && up != next.end());  // nothing opens where something might
      const auto& [byte, to] = !deepest && deeper != next.end()                       ? *deeper
                               : deepest && up != next.end() && rng.uniform() < 0.9  ? *up
                                                                                      : next[rng.below(next.size())];
      doc += byte;
      s = to;
      ASSERT_LT(doc.size(), 100000u);
    }
    EXPECT_GE(std::count(doc.begin(), doc.end(), '['), 10) << doc;
    ASSERT_EQ(testing::schema_violation(schema, io::parse_json_text(doc, "document")), "") << doc;
  }
}

// Decimal text of k / 10^places, shortest, and with a trailing zero.
std::vector<std::string> decimal_texts(int64_t k, int places) {
  const bool negative = k < 0;
  const std::string digits = std::to_string(std::llabs(k));
  std::string whole = digits.size() > static_cast<size_t>(places) ? digits.substr(0, digits.size() - places) : "0";
  std::string fraction = std::string(std::max<int>(0, places - static_cast<int>(digits.size())), '0') +
                         digits.substr(digits.size() > static_cast<size_t>(places) ? digits.size() - places : 0);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  const std::string sign = negative ? "-" : "";
  const std::string text = sign + whole + (fraction.empty() ? "" : "." + fraction);
  return {text, text + (fraction.empty() ? ".0" : "0")};
}

// multipleOf m = P / 10^q: a text k / 10^places is accepted where it is a multiple, in range, written
// with at most q fraction digits (integers with none), and passes as ajv checks it (x / m whole in
// doubles): every multiple does where m is a binary fraction (0.5, 0.25, 2.5); else a bounded
// range's are listed one by one, each as its shortest text (0.3 of 0.1 fails), and an unbounded
// one keeps whole multiples.
TEST(JsonSchemaGrammar, MultiplesAreExactlyTheValuesAccepted) {
  const std::vector<std::tuple<const char*, int64_t, int, bool>> schemas = {  // the schema, P, q, whole only
      {R"({"type": "integer", "multipleOf": 7})", 7, 0, false},
      {R"({"type": "integer", "multipleOf": 15, "minimum": -100, "exclusiveMaximum": 400})", 15, 0, false},
      {R"({"type": "integer", "multipleOf": 0.5, "maximum": 20})", 5, 1, false},
      {R"({"type": "number", "multipleOf": 0.25, "minimum": -3, "maximum": 7.5})", 25, 2, false},
      {R"({"type": "number", "multipleOf": 2.5})", 25, 1, false},
      {R"({"type": "number", "multipleOf": 0.01, "exclusiveMinimum": 0})", 1, 2, true},
      {R"({"type": "number", "multipleOf": 0.01, "minimum": -2, "exclusiveMaximum": 2.5})", 1, 2, false},
      {R"({"type": "number", "multipleOf": 0.1, "minimum": -3, "maximum": 3})", 1, 1, false},
      {R"({"type": "number", "multipleOf": 0.3, "exclusiveMinimum": -1.5})", 3, 1, true},
      {R"({"type": "integer", "multipleOf": 0.7, "minimum": -1000, "maximum": 1000})", 7, 1, false},
      {R"({"type": "number", "multipleOf": 3, "minimum": -20})", 3, 0, false},
      {R"({"type": "number", "multipleOf": 100})", 100, 0, false}};
  for (const auto& [text, P, q, whole_only] : schemas) {
    const json schema = json::parse(text);
    json range = schema;  // the schema's bounds alone
    range.erase("multipleOf");
    Automaton a(json_schema_grammar(schema));
    const bool integer = schema["type"] == "integer";
    const int places = integer ? 0 : 3;
    const int64_t span = integer ? 600 : 3000, scale = integer ? 1 : 1000;
    for (int64_t k = -span; k <= span; ++k) {
      const bool multiple = k * static_cast<int64_t>(std::pow(10, q)) % (P * scale) == 0;
      for (const std::string& t : decimal_texts(k, places)) {
        const size_t point = t.find('.');
        const int64_t written = point == std::string::npos ? 0 : static_cast<int64_t>(t.size() - point - 1);
        const bool in = testing::schema_violation(range, json::parse(t)).empty();
        const bool as_validators = testing::schema_violation(schema, json::parse(t)).empty();
        // A listed multiple is written as its shortest text (no trailing zero).
        const bool listed = P % static_cast<int64_t>(std::pow(5, q)) != 0 && !whole_only;
        const bool shortest = written == 0 || t.back() != '0';
        const bool want = multiple && in && as_validators && written <= (integer || whole_only ? 0 : q) &&
                          (!listed || shortest);
        ASSERT_EQ(accepts(a, t), want) << text << " " << t;
        if (want) {
          ASSERT_EQ(testing::schema_violation(schema, json::parse(t)), "") << text << " " << t;
        }
      }
    }
  }
}

TEST(JsonSchemaGrammar, NumberRangesAcceptExactlyTheValuesInside) {
  const std::vector<const char*> schemas = {
      R"({"type": "number", "minimum": -1.25, "maximum": 3.5})",
      R"({"type": "number", "exclusiveMinimum": -1.25, "exclusiveMaximum": 3.5})",
      R"({"type": "number", "minimum": 0.05})",
      R"({"type": "number", "exclusiveMaximum": -0.5})",
      R"({"type": "number", "minimum": 1, "exclusiveMinimum": 1})",
      R"({"type": "integer", "minimum": -17, "maximum": 230})",
      R"({"type": "integer", "exclusiveMinimum": -17.5, "exclusiveMaximum": 230})",
      R"({"type": "integer", "minimum": 0.5})",
      R"({"type": "number", "minimum": 0, "maximum": 0})",
      R"({"type": "integer", "minimum": 5, "exclusiveMaximum": true, "maximum": 9})"};
  for (const char* text : schemas) {
    const json schema = json::parse(text);
    Automaton a(json_schema_grammar(schema));
    const bool integer = schema["type"] == "integer";
    const int64_t span = integer ? 600 : 5000;
    for (int64_t k = -span; k <= span; ++k)
      for (const std::string& t : decimal_texts(k, integer ? 0 : 3)) {
        const json value = json::parse(t);
        const bool in = testing::schema_violation(schema, value).empty();
        const bool plain = !integer || t.find('.') == std::string::npos;  // integers are written without a point
        if (plain) ASSERT_EQ(accepts(a, t), in) << text << " " << t;
        else ASSERT_FALSE(accepts(a, t)) << text << " " << t;
      }
    EXPECT_FALSE(accepts(a, "-0")) << text;
  }
}

TEST(JsonSchemaGrammar, DatesFollowTheCalendar) {
  Automaton a(json_schema_grammar(json::parse(R"({"type": "string", "format": "date"})")));
  static const int days[] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  for (int year : {1900, 1999, 2000, 2023, 2024, 2100, 2400, 0, 4, 9996})
    for (int month = 0; month <= 13; ++month)
      for (int day = 0; day <= 32; ++day) {
        char text[32];
        std::snprintf(text, sizeof text, "\"%04d-%02d-%02d\"", year, month, day);
        const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        const bool valid = month >= 1 && month <= 12 && day >= 1 && day <= (month == 2 && leap ? 29 : days[month]);
        ASSERT_EQ(accepts(a, text), valid) << text;
      }
}

TEST(JsonSchemaGrammar, WhitespaceIsBounded) {
  Automaton a(json_schema_grammar(json::parse(R"({"type": "array", "items": {"type": "integer"}})")));
  EXPECT_TRUE(accepts(a, "[\n" + std::string(16, ' ') + "1]"));
  EXPECT_FALSE(accepts(a, "[\n" + std::string(17, ' ') + "1]"));
  EXPECT_FALSE(accepts(a, "[  1]"));
  EXPECT_FALSE(accepts(a, "[1] "));  // the document ends at its last byte
  EXPECT_TRUE(accepts(a, " [1]"));
  EXPECT_FALSE(accepts(a, "[" + std::string(17, '1') + "]"));  // 16 digits at most
}

TEST(JsonSchemaGrammar, HostileAndUnsupportedSchemasAreRefusedNamingTheKeyword) {
  std::string deep = R"({"type": "string"})";
  for (int i = 0; i < 100; ++i) deep = R"({"type": "array", "items": )" + deep + "}";
  json huge_enum = json::array();
  for (int i = 0; i < 100000; ++i) huge_enum.push_back(i);
  json products = json::object({{"allOf", json::array()}});  // 4^6 products of choices
  for (int i = 0; i < 6; ++i)
    products["allOf"].push_back(json::parse(R"({"anyOf": [{"type": "null"}, {}, true, {"type": ["null", "string"]}]})"));
  std::vector<std::tuple<json, std::string, std::string>> cases = {
      {products, "", "more than 1024 schemas to merge"},
      {json::parse(R"({"type": "object", "properties": {"a": {"type": "string", "format": "idn-email"}}})"),
       "#/properties/a/format", "format 'idn-email'"},
      {json::parse(R"({"type": "string", "foo": 1})"), "#/foo", "'foo' is not supported"},
      {json::parse(R"({"type": "string", "nullable": "yes"})"), "#/nullable", "'nullable' must be a boolean"},
      {json::parse(R"({"enum": ["a"], "nullable": true})"), "#/nullable", "needs 'type'"},
      {json::parse(R"({"oneOf": [{"type": "string", "nullable": true}, {"type": "null"}]})"), "#/oneOf",
       "may both match"},
      {json::parse(R"({"type": "integer", "format": "date"})"), "#/format", "on a number cannot be enforced"},
      {json::parse(R"({"type": "number", "format": "int16"})"), "#/format", "on a number cannot be enforced"},
      {json::parse(R"({"type": "boolean", "format": "int32"})"), "#/format", "no string or number"},
      {json::parse(R"({"$defs": {"x": {"type": "string"}}, "type": "object", "properties": {"p": {
          "$id": "http://example.com/p", "$defs": {"x": {"type": "integer"}}, "type": "object",
          "properties": {"q": {"$ref": "#/$defs/x"}}}}})"),
       "#/properties/p/$id", "'$id' below the root"},
      {json::parse(R"({"allOf": [{"$id": "http://example.com/a", "type": "string"}]})"), "#/allOf/0/$id",
       "'$id' below the root"},
      {json::parse(R"({"not": {}})"), "#/not", "'not' is not supported"},
      {json::parse(deep), "", "nested deeper"},
      {json{{"enum", huge_enum}}, "#/enum", "at most"},
      {json::parse(R"({"$ref": "#"})"), "#", "matches no text"},  // only itself, without end
      {json::parse(R"({"anyOf": [{"$ref": "#"}, {"type": "null"}]})"), "#", "left-recursive"},
      {json::parse(R"j({"type": "string", "pattern": "(?=x)"})j"), "#/pattern", "lookahead"},
      {json::parse(R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})"), "#/oneOf", "may both match"},
      {json::parse(R"({"type": "string", "maxLength": 100000})"), "#/maxLength", "beyond"},
      // Counts that multiply along nesting past what any document could finish.
      {json::parse(R"({"type": "array", "minItems": 10000, "items": {"type": "array", "minItems": 10000,
                      "items": {"type": "array", "minItems": 10000}}})"),
       "#/items/minItems", "at least 10000 items in each of 10000 places"},
      {json::parse(R"({"type": "string", "pattern": "^(a{10000}){10000}$"})"), "#/pattern", "cannot be finished"},
      {json::parse(R"({"type": "array", "minItems": 200, "items": {"type": "string", "minLength": 10000}})"),
       "#/items/minLength", "cannot be finished"},
      {json::parse(R"({"type": "array", "minItems": 3, "maxItems": 2})"), "#/maxItems", "below"},
      {json::parse(R"({"type": "object", "minProperties": 3, "maxProperties": 2})"), "#/maxProperties", "below"},
      {json::parse(R"({"properties": {"a": {}, "b": {}}, "required": ["a", "b"], "maxProperties": 1})"),
       "#/maxProperties", "below the 2 required"},
      {json::parse(R"({"properties": {"a": {}}, "additionalProperties": false, "minProperties": 2})"),
       "#/minProperties", "more than the 1 listed properties"},
      {json::parse(R"({"type": "object", "minProperties": 2})"), "#/minProperties", "could repeat a key"},
      {json::parse(R"({"type": "object", "maxProperties": 9223372036854775807})"), "#/maxProperties",
       "more than 10000 properties"},
      {json::parse(R"({"type": "object", "propertyNames": {"const": "a", "enum": ["a"]}})"), "#/propertyNames",
       "not both"},
      {json::parse(R"({"type": "object", "minProperties": -1})"), "#/minProperties", "non-negative"},
      {json::parse(R"({"type": "object", "propertyNames": {"pattern": "^a"}})"), "#/propertyNames/pattern",
       "enum or const of names"},
      {json::parse(R"({"properties": {"a": {}}, "required": ["a"], "propertyNames": {"enum": ["b"]}})"),
       "#/propertyNames", "'a' is required"},
      {json::parse(R"({"type": "object", "additionalProperties": {}, "maxProperties": 20000})"), "#/maxProperties",
       "cannot be enforced"},
      {json::parse(R"({"$ref": "http://example.com/s.json"})"), "#/$ref", "not a pointer"},
      {json::parse(R"({"$ref": "#/$defs/none"})"), "#/$ref", "points at nothing"},
      {json::parse(R"({"type": "strings"})"), "#/type", "must be one of"},
      {json::parse(R"({"type": "array", "uniqueItems": true})"), "#/uniqueItems", "is enforced where"},
      {json::parse(R"({"type": "array", "items": {"type": "string"}, "uniqueItems": true})"), "#/uniqueItems",
       "is enforced where"},
      {json::parse(R"({"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": true, "minItems": 4})"),
       "#/minItems", "more distinct items"},
      {json::parse(R"({"type": "array", "items": {"enum": [1]}, "uniqueItems": 1})"), "#/uniqueItems",
       "must be a boolean"},
      // The items' schema gets every check it gets elsewhere.
      {json::parse(R"({"type": "array", "items": {"const": "a", "enum": ["b"]}, "uniqueItems": true})"),
       "#/items/enum", "beside 'const'"},
      {json::parse(R"({"$defs": {"C": {"enum": ["a", "b"]}}, "type": "array",
                      "items": {"$ref": "#/$defs/C", "enum": ["a"]}, "uniqueItems": true})"),
       "#/items/enum", "beside '$ref'"},
      {json::parse(R"({"type": "array", "items": {"type": "strings", "const": "a"}, "uniqueItems": true})"),
       "#/items/const", "no value of the enum has the schema's type"},
      {json::parse(R"({"type": "array", "prefixItems": {"type": "integer"}})"), "#/prefixItems", "must be a list"},
      {json::parse(R"({"anyOf": [{"type": "null"}], "discriminator": {"propertyName": "k"}})"), "#/discriminator",
       "beside 'oneOf' only"},
      {json::parse(R"({"oneOf": [{"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
                                 {"type": "object", "properties": {"k": {"enum": ["b"]}}, "required": ["k"]}],
                      "discriminator": {"propertyName": "k"}})"),
       "#/discriminator", "as a string 'const'"},
      {json::parse(R"({"$defs": {"A": {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
                                 "B": {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]}},
                      "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
                      "discriminator": {"propertyName": "k", "mapping": {"a": "#/$defs/B"}}})"),
       "#/discriminator/mapping", "sends 'a'"},
      {json::parse(R"({"type": "array", "prefixItems": [{}], "items": false, "minItems": 2})"), "#/items",
       "allows 1 items, but 'minItems' asks for 2"},
      {json::parse(R"({"type": "array", "prefixItems": [{"type": "integer"}, {"format": "idn-email"}]})"),
       "#/prefixItems/1/format", "format 'idn-email'"},
      {json::parse(R"({"type": "integer", "minimum": 5, "maximum": 4})"), "#", "no number lies"},
      {json::parse(R"({"type": "object", "properties": {"a": false}, "required": ["a"]})"), "#/properties/a",
       "false matches no document"},
      {json::parse(R"({"type": "object", "required": ["a"], "additionalProperties": false})"), "#/required",
       "forbids"},
      {json::parse(R"({"type": "string", "pattern": "a", "maxLength": 3})"), "#/pattern", "beside minLength"},
      {json::parse(R"({"type": "string", "pattern": "^a+$", "maxLength": 3})"), "#/pattern", "1 or more characters"},
      {json::parse(R"({"type": "string", "format": "email", "maxLength": 100})"), "#/maxLength", "5 to 255 characters"},
      {json::parse(R"({"type": "string", "format": "date", "minLength": 11})"), "#/minLength", "10 characters"},
      {json::parse(R"({"type": "string", "pattern": "^a{0,3}$", "minLength": 1})"), "#/pattern", "0 to 3 characters"},
      {json::parse(R"({"type": "integer", "multipleOf": 1000})"), "#/multipleOf", "needs 1000 remainders"},
      {json::parse(R"({"type": "number", "multipleOf": 0.0137})"), "#/multipleOf", "needs 137 remainders"},
      {json::parse(R"({"type": "number", "multipleOf": 0})"), "#/multipleOf", "above 0"},
      {json::parse(R"({"type": "number", "multipleOf": -2})"), "#/multipleOf", "above 0"},
      {json::parse(R"({"type": "integer", "multipleOf": 7, "minimum": 1, "maximum": 6})"), "#", "multipleOf"},
      // Some multiples of 0.7 do not come out whole in doubles (0.7 * 3 = 2.1, 2.1 / 0.7 = 3.0000000000000004).
      {json::parse(R"({"type": "number", "multipleOf": 0.7})"), "#/multipleOf", "validators divide in doubles"},
      {json::parse(R"({"type": "number", "multipleOf": 0.1, "minimum": 0.25, "maximum": 0.35})"), "#",
       "as validators check it"},
      {json::parse(R"({"enum": [1], "minimum": 0})"), "#/minimum", "beside 'enum'"},
      {json::parse(R"({"type": "number", "minimum": "1"})"), "#/minimum", "must be a number"},
      {json::parse("[]"), "#", "must be an object or a boolean"},
      {json::parse(R"({"allOf": [{"type": "string", "pattern": "a"}, {"pattern": "b"}]})"), "#/allOf/1/pattern",
       "two different 'pattern's"},
      {json::parse(R"({"allOf": [{"type": "string"}, {"type": ["integer", "null"]}]})"), "#/allOf/1/type",
       "no type in common"},
      {json::parse(R"({"type": "object", "additionalProperties": false,
                      "allOf": [{"properties": {"a": {}}, "required": ["a"]}]})"),
       "#", "'a' is required"},
      {json::parse(R"({"$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}}, "allOf": [{"$ref": "#/$defs/A"}]})"), "",
       "nested deeper"},
      {json::parse(R"({"allOf": [{"anyOf": [{"type": "null"}]}, {"oneOf": [{"type": "null"}, {"const": null}]}]})"),
       "#/allOf/anyOf/0/oneOf", "may both match"},
      {json::parse(R"({"allOf": [{"type": "object", "additionalProperties": {"type": "null"}}]})"),
       "#/allOf/0/additionalProperties", "cannot be merged"},
      {json::parse(R"({"allOf": [{"enum": [1, 2]}, {"const": 3}]})"), "#/allOf/1/const", "none in common"},
      {json::parse(R"({"allOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "boolean"}]})"), "",
       "no type in common"},
      {json::parse(R"({"allOf": [{"type": "string"}, {"not": {}}]})"), "#/allOf/1/not", "'not' is not supported"},
      {json::parse(R"({"allOf": [{"type": "array", "items": false}, {"items": {"type": "integer"}}]})"), "#/allOf/0",
       "cannot be merged"},
      {json::parse(R"({"allOf": [{"prefixItems": [{"type": "string"}]}, {"items": {"type": "integer"}}]})"),
       "#/allOf/0", "cannot be merged"},
      {json::parse(R"({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "allOf": [{"$ref": "#/$defs/A"}]})"),
       "#/allOf/0/$ref/$ref", "never ends"},
      // Objects equal whatever the order of their members: both branches may match.
      {json::parse(R"({"oneOf": [{"type": "object", "properties": {"k": {"const": {"a": 1, "b": 2}}}, "required": ["k"]},
                                 {"type": "object", "properties": {"k": {"const": {"b": 2, "a": 1}}}, "required": ["k"]}]})"),
       "#/oneOf", "may both match"},
      {json::parse(R"({"allOf": [{"const": 9007199254740993}, {"const": 9007199254740992.0}]})"), "#/allOf/1/const",
       "none in common"},
  };
  // uniqueItems over a huge enum: refused at once, not after comparing every pair.
  json huge_set = {{"type", "array"}, {"uniqueItems", true}, {"items", {{"enum", huge_enum}}}};
  cases.emplace_back(huge_set, "#/items/enum", "at most");
  json big_values = {{"type", "array"}, {"uniqueItems", true}, {"items", {{"enum", json::array()}}}};
  for (int i = 0; i < 65; ++i) big_values["items"]["enum"].push_back(i);
  cases.emplace_back(big_values, "#/uniqueItems", "more than 64 values");
  // A $ref reached through several branches at every level: its types are not looked at 4^16 times.
  json fan = json::parse(R"({"oneOf": [{"$ref": "#/$defs/A"}, {"type": "string"}]})");
  fan["$defs"]["A"]["allOf"] = json::array();
  for (int i = 0; i < 8; ++i) fan["$defs"]["A"]["allOf"].push_back({{"$ref", "#/$defs/A"}});
  cases.emplace_back(fan, "#/oneOf", "may both match");
  // An anyOf distributed over many copies of a large schema: refused before it is copied.
  json copies = {{"$defs", {{"X", {{"properties", {{"p", {{"description", std::string(100000, 'x')}}}}}}}}}};
  copies["allOf"] = json::array();
  for (int i = 0; i < 250; ++i) copies["allOf"].push_back({{"$ref", "#/$defs/X"}});
  copies["allOf"].push_back({{"anyOf", json::array({json::object(), json::object()})}});
  cases.emplace_back(copies, "", "copies more than");
  for (const auto& [schema, where, why] : cases) {
    try {
      json_schema_grammar(schema);
      ADD_FAILURE() << where << ": accepted";
    } catch (const GrammarError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << where << ": " << e.what();
      if (!where.empty()) {
        EXPECT_EQ(e.where, where) << e.what();
      }
    }
  }
}

// Enums pinned across oneOf branches and intersected across allOf are compared through hash sets
// of their values, the enum limit checked first: answered within about a second, not after
// comparing every pair of values.
TEST(JsonSchemaGrammar, LargeEnumsAcrossBranchesAreAnsweredQuickly) {
  const auto branch = [](int64_t from, int64_t count) {
    json values = json::array();
    for (int64_t v = from; v < from + count; ++v) values.push_back(v);
    return json{{"type", "object"}, {"properties", {{"k", {{"enum", values}}}}}, {"required", {"k"}}};
  };
  Timer timer;
  json huge = {{"oneOf", {branch(0, 60000), branch(60000, 60000)}}};
  try {
    json_schema_grammar(huge);
    ADD_FAILURE() << "accepted";
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.where, "#/oneOf/0/properties/k") << e.what();
    EXPECT_NE(std::string(e.what()).find("at most 4096"), std::string::npos) << e.what();
  }
  json many = {{"oneOf", json::array()}};
  for (int i = 0; i < 12; ++i) many["oneOf"].push_back(branch(i * 4096, 4096));
  EXPECT_NO_THROW(json_schema_grammar(many));
  json all = {{"allOf", json::array()}};
  for (int i = 0; i < 64; ++i) all["allOf"].push_back(branch(i, 4096)["properties"]["k"]);
  Automaton a(json_schema_grammar(all));
  EXPECT_TRUE(accepts(a, "63"));
  EXPECT_TRUE(accepts(a, "4095"));
  EXPECT_FALSE(accepts(a, "62"));
  EXPECT_FALSE(accepts(a, "4096"));
  EXPECT_LT(timer.seconds(), 3.0);
  // Equal values, as JSON Schema compares them, overlap: 1 and 1.0.
  const json overlap = json::parse(R"({"oneOf": [
      {"type": "object", "properties": {"k": {"enum": [2, 1]}}, "required": ["k"]},
      {"type": "object", "properties": {"k": {"enum": [3, 1.0]}}, "required": ["k"]}]})");
  EXPECT_THROW(json_schema_grammar(overlap), GrammarError);
}

// An enum value that holds a control marker's text is text inside its string, in a set too: the
// marker's token (its control byte) is never allowed there.
TEST(JsonSchemaGrammar, EnumValuesInASetAreTextNotControlTokens) {
  GrammarBuilder b;
  b.write_as_controls({"</think>"});
  JsonGrammar j(b);
  const int32_t root = j.schema(nlohmann::ordered_json::parse(
      R"({"type": "array", "items": {"enum": ["</think>", "x"]}, "uniqueItems": true})"));
  Automaton a(b.build(root));
  EXPECT_TRUE(accepts(a, R"(["</think>", "x"])"));
  const Automaton::State in_string = a.next(a.start(), "[\"");
  ASSERT_GE(in_string, 0);
  EXPECT_LT(a.next(in_string, static_cast<uint8_t>(kFirstControlByte)), 0);
}

TEST(JsonSchemaGrammar, ValuesCompareAsJsonSchemaDoes) {
  using nlohmann::ordered_json;
  const auto same = [](const char* a, const char* b) { return same_value(ordered_json::parse(a), ordered_json::parse(b)); };
  EXPECT_TRUE(same("1", "1.0"));
  EXPECT_TRUE(same(R"({"a": [1, {"b": null}], "c": "x"})", R"({"c": "x", "a": [1.0, {"b": null}]})"));
  EXPECT_TRUE(same("18446744073709551615", "18446744073709551615"));
  EXPECT_FALSE(same("9007199254740993", "9007199254740992.0"));
  EXPECT_FALSE(same("1", "true"));
  EXPECT_FALSE(same("[1, 2]", "[2, 1]"));
  EXPECT_FALSE(same(R"({"a": 1})", R"({"a": 1, "b": 1})"));
  EXPECT_FALSE(same("-1", "18446744073709551615"));
  EXPECT_TRUE(same("10000000000000000000", "1e19"));
  EXPECT_TRUE(same("-9223372036854775808", "-9.223372036854775808e18"));
  EXPECT_TRUE(same("-0.0", "0"));
  EXPECT_FALSE(same("0.5", "\"0.5\""));
  EXPECT_EQ(canonical_text(ordered_json::parse(R"({"b": [1.0], "a": 2})")),
            canonical_text(ordered_json::parse(R"({"a": 2.0, "b": [1]})")));
}

// A schema that is part of a request (a tool's parameters): errors behind a $ref name their
// pointer within the request too.
TEST(JsonSchemaGrammar, ErrorsBehindARefNameTheirPlaceInTheRequest) {
  const json schema = json::parse(R"({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}},
                                      "$defs": {"a": {"type": "string", "format": "idn-email"}}})");
  GrammarBuilder b;
  JsonGrammar j(b);
  try {
    j.schema(schema, "#/tools/0/function/parameters");
    ADD_FAILURE() << "accepted";
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.where, "#/tools/0/function/parameters/$defs/a/format") << e.what();
  }
}

}  // namespace
}  // namespace difftx::grammar
