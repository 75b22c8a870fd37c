// Values as Python literals and objects as keyword arguments (json_grammar.h): the JSON rules
// with None / True / False for null / true / false, and values written the way Python reads them.
#include <algorithm>
#include <array>

#include "grammar/json_grammar.h"

namespace difftx::grammar {
namespace {

using json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 35> kPythonKeywords = {
    "False", "None",   "True",  "and",      "as",       "assert", "async",  "await", "break",
    "class", "continue", "def", "del",      "elif",     "else",   "except", "finally", "for",
    "from",  "global", "if",    "import",   "in",       "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise", "return",   "try",      "while",  "with",   "yield"};

const CodePointRanges kIdentifierStart = {{'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const CodePointRanges kIdentifierRest = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};

// A value as a Python literal: strings, numbers and the brackets as compact JSON writes them
// (Python reads JSON's string escapes and numbers as the same values), None, True and False.
void write_python(const json& v, std::string& out) {
  if (v.is_null()) {
    out += "None";
  } else if (v.is_boolean()) {
    out += v.get<bool>() ? "True" : "False";
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      write_python(v[i], out);
    }
    out += ']';
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : v.items()) {
      if (!first) out += ',';
      first = false;
      out += json(key).dump(-1, ' ', false, json::error_handler_t::strict);
      out += ':';
      write_python(value, out);
    }
    out += '}';
  } else {
    out += v.dump(-1, ' ', false, json::error_handler_t::strict);
  }
}

}  // namespace

bool python_keyword_name(std::string_view name) {
  if (name.empty() || std::find(kPythonKeywords.begin(), kPythonKeywords.end(), name) != kPythonKeywords.end())
    return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

std::string JsonGrammar::literal_text(const json& value) const {
  if (o_.syntax == LiteralSyntax::json) return value.dump(-1, ' ', false, json::error_handler_t::strict);
  std::string out;
  write_python(value, out);
  return out;
}

Sequence JsonGrammar::word(const char* json_word) {
  const std::string w = json_word;
  if (o_.syntax == LiteralSyntax::json) return b_.literal(w);
  return b_.literal(w == "null" ? "None" : w == "true" ? "True" : "False");
}

int32_t JsonGrammar::keyword_arguments(const json& s, const std::string& where) {
  return root(s, where, Members::keywords);
}

int32_t JsonGrammar::identifier_other_than(std::vector<std::string> names) {
  names.emplace_back();  // never empty
  names.insert(names.end(), kPythonKeywords.begin(), kPythonKeywords.end());
  return text_other_than(names, kIdentifierStart, kIdentifierRest, [this](const CodePointRanges& r) {
    return GrammarBuilder::ref(b_.code_points("identifier-char", r));
  });
}

}  // namespace difftx::grammar
