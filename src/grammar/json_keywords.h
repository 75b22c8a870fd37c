// The JSON Schema keywords JsonGrammar knows (json_grammar.h): those it enforces, by the type
// each constrains, and the annotations it passes over; and the JSON pointers that name them in
// errors.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace difftx::grammar {

// JSON Schema's annotations, OpenAPI's `example` and editors' descriptions (VS Code's schemas,
// which tool definitions copy); any `x-` extension keyword is one too (is_annotation).
inline const std::set<std::string, std::less<>> kAnnotations = {
    "title",     "description", "default",  "examples", "$schema",          "$id",
    "$comment",  "deprecated",  "readOnly", "writeOnly", "$defs",           "definitions",
    "contentEncoding", "contentMediaType", "example", "markdownDescription", "enumDescriptions",
    "markdownEnumDescriptions", "deprecationMessage"};
inline bool is_annotation(std::string_view key) { return kAnnotations.count(key) > 0 || key.starts_with("x-"); }
inline const std::set<std::string, std::less<>> kKeywords = {
    "type",     "properties", "required",  "additionalProperties", "items",     "minItems",  "maxItems",
    "enum",     "const",      "anyOf",     "oneOf",                "allOf",     "$ref",      "minLength",
    "maxLength", "pattern",   "format",    "minimum",              "maximum",   "exclusiveMinimum",
    "exclusiveMaximum", "uniqueItems", "prefixItems", "additionalItems", "minProperties", "maxProperties",
    "propertyNames", "multipleOf"};
inline const std::set<std::string, std::less<>> kObjectKeywords = {"properties", "required", "additionalProperties",
                                                                   "minProperties", "maxProperties", "propertyNames"};
inline const std::set<std::string, std::less<>> kArrayKeywords = {"items",       "minItems",    "maxItems",
                                                          "uniqueItems", "prefixItems", "additionalItems"};
inline const std::set<std::string, std::less<>> kStringKeywords = {"minLength", "maxLength", "pattern", "format"};
inline const std::set<std::string, std::less<>> kNumberKeywords = {"minimum", "maximum", "exclusiveMinimum",
                                                           "exclusiveMaximum", "multipleOf"};
inline const std::vector<std::string> kTypes = {"null", "boolean", "object", "array", "string", "number", "integer"};

// The pointer to `key` under `path`, the key escaped as a reference token ("~0", "~1").
inline std::string child(const std::string& path, const std::string& key) {
  std::string token;
  for (char c : key) token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return path + "/" + token;
}

}  // namespace difftx::grammar
