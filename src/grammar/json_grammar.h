// JSON documents as grammar rules: any JSON value, and the documents that validate against a
// JSON Schema (the subset below), built into a GrammarBuilder so that several schemas can be
// parts of one grammar (a tool call's name and arguments, say).
//
// Every document the rules match validates against the schema; where JSON Schema allows more
// than the rules produce, the rules take a subset: object properties in the order `properties`
// lists them (required ones always there, optional ones skippable, others only where
// `additionalProperties` allows them - absent, only where `properties` is absent too - with keys
// that need no escapes), numbers with at most 16
// digits before and after the point (15 significant in all where a range bounds them), the
// exponent's two, strings with escapes only where the character needs one or as \uXXXX, enum and
// const values in their compact form. Insignificant whitespace is bounded: at most a space, or a
// newline and up to max_indent spaces or tabs, between tokens, so every document is finite.
//
// Keywords: type (one or a list), properties, required, additionalProperties (false, true or a
// schema), minProperties, maxProperties, propertyNames (an enum or const of names), items, minItems,
// maxItems, enum, const (with type only),
// anyOf, oneOf (whose branches must be provably disjoint: by type or by a required property's
// const/enum), allOf of one schema, $ref to "#" or a JSON pointer within the document ($defs,
// definitions), minLength, maxLength, pattern (regex.h), format (date, date-time, uuid, ...; on a
// number int32, int64, float, double), nullable (null one more type, beside type only),
// minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, or draft 4's booleans), multipleOf
// (P x 10^-q with P <= 100: at most q fraction digits, the digits carrying their remainder), and the
// annotations (title, description, default, examples, $schema, $id at the root, $comment, deprecated,
// readOnly, writeOnly). Anything else - or a combination the rules cannot enforce - is a
// GrammarError whose `where` is the JSON pointer of the keyword, e.g. "#/properties/id/format".
//
// The same documents as Python literals (LiteralSyntax::python, python_literals.cpp): None, True
// and False, strings in double quotes with only the escapes JSON and Python read alike (so never
// \/), the rest as JSON writes it, which Python reads as the same value; and an object as the
// keyword arguments of a call.
//
// An object as XML parameters (xml_parameters.cpp; the tool calls of Qwen3-Coder, <parameter=NAME>
// blocks, and GLM-4.5, <arg_key> / <arg_value> pairs): tags around each member's name and value,
// the value raw text where the member's schema allows a string (schema_types), its JSON text
// where it does not.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace difftx::grammar {

// How the rules write values: as JSON, or as the Python literals of the same values.
enum class LiteralSyntax { json, python };

// How XML parameters are tagged: per member, open NAME middle VALUE close (rules of the same
// builder). A raw value never holds `value_end` (what its close begins with, white space aside);
// a name never holds a byte of `name_stops`. `label` names the members in errors.
struct XmlTags {
  Sequence open, middle, close;
  std::string value_end, name_stops, label;  // e.g. "</parameter>", ">\n", "<parameter=...> blocks"
};

struct JsonGrammarOptions {
  LiteralSyntax syntax = LiteralSyntax::json;
  int max_indent = 16;            // whitespace: "", " ", or "\n" and up to this many spaces / tabs
  int max_schema_depth = 64;      // nested subschemas
  int64_t max_enum_values = 4096;
  int64_t max_enum_bytes = 1 << 18;  // their compact JSON, in all
};

class JsonGrammar {
 public:
  explicit JsonGrammar(GrammarBuilder& builder, JsonGrammarOptions options = {});

  // A rule matching the documents that validate against `schema`, a whole schema document
  // ($ref "#" is its root). `where` prefixes the pointers in errors (e.g. "#" or a tool's path).
  int32_t schema(const nlohmann::ordered_json& schema, const std::string& where = "#");
  // A call's parenthesised keyword arguments, `(name=value, ...)`, that validate against `schema`,
  // an object's (python syntax): properties as for an object, each name a Python identifier that
  // is no keyword (else a GrammarError at its property), additional ones under such names.
  int32_t keyword_arguments(const nlohmann::ordered_json& schema, const std::string& where = "#");
  // An object's members tagged as `tags` says, that validate against `schema`, an object's:
  // properties as for an object, each name without the name stops (else a GrammarError at its
  // property). A value that may be a string is raw text: never the value end; a string's enum and
  // const as they are; minLength, maxLength and pattern without '<'; format as for JSON; anyOf and
  // oneOf a GrammarError. Any other value is its JSON text.
  int32_t xml_parameters(const nlohmann::ordered_json& schema, const XmlTags& tags, const std::string& where = "#");
  int32_t any_value();
  int32_t any_object();
  Element ws();  // insignificant whitespace, bounded
  // The compact text of a value (keys in their order) in the rules' syntax, as bytes to match.
  Sequence value_literal(const nlohmann::ordered_json& value);
  // One of these byte strings, as a rule (their common prefixes shared).
  int32_t one_of_literals(const std::vector<std::string>& texts);
  GrammarBuilder& builder() { return b_; }

 private:
  struct Context;
  // How an object's members are written: JSON, a call's keyword arguments, XML parameters.
  enum class Members { json, keywords, xml };
  // The root (its members written as `members` says) and every schema below it.
  int32_t root(const nlohmann::ordered_json& s, const std::string& where, Members members);
  int32_t compile(const nlohmann::ordered_json& s, const std::string& path, int depth, Members members = Members::json);
  int32_t compile_object(const nlohmann::ordered_json& s, const std::string& path, int depth,
                         Members members = Members::json);
  int32_t compile_array(const nlohmann::ordered_json& s, const std::string& path, int depth);
  // uniqueItems: true, where the items are one of a few values (min to max of them, max -1: any).
  int32_t unique_array(const nlohmann::ordered_json& s, const std::string& path, int depth, int64_t min, int64_t max);
  // A string; raw: as an XML parameter's raw text, not in quotes.
  int32_t compile_string(const nlohmann::ordered_json& s, const std::string& path, bool raw = false);
  // An XML parameter's value: raw text where the schema allows a string, else JSON.
  int32_t xml_value(const nlohmann::ordered_json& s, const std::string& path, int depth);
  int32_t compile_number(const nlohmann::ordered_json& s, const std::string& path, bool integer);
  int32_t compile_ref(const std::string& ref, const std::string& path, int depth);
  int32_t compile_enum(const nlohmann::ordered_json& values, const nlohmann::ordered_json& s, const std::string& path);
  void check_discriminator(const nlohmann::ordered_json& s, const std::string& path) const;
  void check_one_of(const nlohmann::ordered_json& branches, const std::string& path, int depth);
  const nlohmann::ordered_json& resolve(const std::string& ref, const std::string& path) const;
  // The schema a chain of "$ref"s ends at (the schema itself where it is no reference).
  const nlohmann::ordered_json& dereferenced(const nlohmann::ordered_json& schema, const std::string& path) const;

  // A value's compact text in the rules' syntax (throws json's type_error on invalid UTF-8).
  std::string literal_text(const nlohmann::ordered_json& value) const;
  // null, true, false in the rules' syntax.
  Sequence word(const char* json_word);

  // Strings: the character rule for a set of code points (escaped where needed), and the key of
  // an additional property that is none of `names`.
  Element json_char(const CodePointRanges& ranges);
  int32_t string_char();
  int32_t key_other_than(const std::vector<std::string>& names);
  // Text of code points from `first`, then from `rest`, that is none of `names`, each code point
  // matched by `one`.
  int32_t text_other_than(const std::vector<std::string>& names, const CodePointRanges& first,
                          const CodePointRanges& rest, const std::function<Element(const CodePointRanges&)>& one);
  // A keyword argument's name: a Python identifier, no keyword and none of `names`.
  int32_t identifier_other_than(std::vector<std::string> names);
  // An XML parameter's name: code points but the name stops, none of `names`; its raw text (never
  // the value end), and a raw character of `ranges` (never '<').
  int32_t xml_name_other_than(const std::vector<std::string>& names);
  int32_t xml_text();
  Element raw_char(const CodePointRanges& ranges);
  int32_t string_body(int64_t min, int64_t max);
  // A format's text; raw: as an XML parameter's raw value (no escapes), else inside a JSON string.
  int32_t format(const std::string& name, const std::string& path, bool raw);

  int32_t integer_any();
  int32_t number_any();
  // Refuses a schema whose documents need `count` of something (minItems' items, minLength's
  // characters) in each of the repeated_ places its schema must fill: more than any document
  // could be finished with.
  void check_least(int64_t count, const std::string& where, const char* what) const;

  GrammarBuilder& b_;
  JsonGrammarOptions o_;
  const nlohmann::ordered_json* document_ = nullptr;  // the schema document $ref resolves in
  std::string where_;                                 // its pointer in errors
  const XmlTags* xml_ = nullptr;                      // the tags of the XML parameters being compiled
  std::map<std::string, int32_t> refs_;        // its pointers compiled so far
  std::map<CodePointRanges, int32_t> chars_, raw_chars_;
  std::map<std::string, int32_t> shared_;      // rules built once: "ws", "value", "string", ...
  int64_t repeated_ = 1;  // how often the schema being compiled must occur at least: minItems around it
};

// Whether `name` can name a keyword argument: an ASCII Python identifier that is no keyword.
bool python_keyword_name(std::string_view name);

// JSON Schema's types as bits: what a value is (a number without a fraction is an integer too)
// or what a schema allows (its "number" takes integers too).
namespace json_types {
constexpr int null = 1, boolean = 2, object = 4, array = 8, string = 16, number = 32, integer = 64, any = 127;
}
int value_types(const nlohmann::ordered_json& value);
// Whether two JSON values are equal as JSON Schema compares them (const, enum): numbers by their
// mathematical value (1 and 1.0 alike, a float and an integer only where exactly equal), objects
// by their members in any order.
bool same_value(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);
// A text of a value that two values share exactly where same_value holds (for hash sets of values).
std::string canonical_text(const nlohmann::ordered_json& value);
// The types a schema's `type` keyword allows (its names that are types, and null where `nullable` is true;
// any where it has no `type`).
int declared_types(const nlohmann::ordered_json& schema);
// The names a `type` keyword gives (one, or a non-empty list of them), each a JSON Schema type; a
// GrammarError at `where` otherwise.
std::vector<std::string> type_names(const nlohmann::ordered_json& type, const std::string& where);
// The types a schema's documents may have, from type, const, enum, anyOf / oneOf, allOf and $ref
// (resolved in `document`); any where it says nothing, points at nothing, nests deeper than 32, or
// takes more than 10,000 schemas to tell.
int schema_types(const nlohmann::ordered_json& schema, const nlohmann::ordered_json& document);

// JSON Schema text as a value with its keys in the order written (the order properties are
// written in), checked as every JSON input is (io/json_file.h: depth, repeated keys).
nlohmann::ordered_json parse_schema_text(std::string_view text, const std::string& source);

// The grammar of the documents that validate against `schema`, after bounded leading whitespace.
std::shared_ptr<const Grammar> json_schema_grammar(const nlohmann::ordered_json& schema,
                                                   JsonGrammarOptions options = {}, GrammarLimits limits = {});

}  // namespace difftx::grammar
