// An object as XML parameters (json_grammar.h): tags around each member's name and value, as
// Qwen3-Coder (<parameter=NAME>\nVALUE\n</parameter>\n) and GLM-4.5 (<arg_key>NAME</arg_key>
// <arg_value>VALUE</arg_value>) write a tool call's arguments. A value is read back by its schema's
// types (serve/xml_calls.h): where they include string it is the raw text as it stands (or null,
// where they include null and the text is "null"), so it is written as raw text; otherwise it is
// its JSON text.
#include <algorithm>
#include <cctype>

#include "grammar/json_all_of.h"
#include "grammar/json_grammar.h"
#include "grammar/json_keywords.h"

namespace difftx::grammar {
namespace {

using json = nlohmann::ordered_json;

bool is_null_word(const std::string& text) {  // "null" in any case, as the reader takes it
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower == "null";
}

}  // namespace

int32_t JsonGrammar::xml_parameters(const json& s, const XmlTags& tags, const std::string& where) {
  struct Unset {  // the tags are the caller's: not kept past the call, whatever it throws
    const XmlTags*& tags;
    ~Unset() { tags = nullptr; }
  } unset{xml_};
  xml_ = &tags;
  return root(s, where, Members::xml);
}

int32_t JsonGrammar::xml_value(const json& s, const std::string& path, int depth) {
  const int types = schema_types(s, *document_);
  if (s == json(true)) return xml_text();
  const int32_t as_json = compile(s, path, depth);  // also the checks of the schema
  if (!(types & json_types::string)) return as_json;
  // Raw text: the keywords that constrain a string, and those that lead to them; the keywords of
  // other types leave a string alone.
  for (const char* key : {"anyOf", "oneOf"})
    if (s.contains(key))
      throw GrammarError(child(path, key), std::string("'") + key + "' cannot be enforced on a value of " +
                                               xml_->label + " that may be a string: it is written as raw text");
  if (s.contains("$ref")) {
    const std::string ref = s["$ref"].get<std::string>();
    return xml_value(resolve(ref, child(path, "$ref")), where_ + ref.substr(1), depth + 1);
  }
  if (s.contains("allOf")) {
    const json merged = merge_all_of(s, path, [&](const json& x, const std::string& at) -> const json& {
      return dereferenced(x, at);
    });
    return xml_value(merged, child(path, "allOf"), depth + 1);
  }
  if (s.contains("enum") || s.contains("const")) {
    // A string as it is, null as "null"; what would read back as another value is left out.
    const std::string key = s.contains("const") ? "const" : "enum";
    const json values = key == "const" ? json::array({s["const"]}) : s["enum"];
    const int allowed = declared_types(s);
    std::vector<std::string> texts;
    for (const json& v : values) {
      if (!(value_types(v) & allowed)) continue;
      if (v.is_null()) texts.emplace_back("null");
      if (!v.is_string()) continue;
      const std::string text = v.get<std::string>();
      if (text.find(xml_->value_end) == std::string::npos && !((types & json_types::null) && is_null_word(text)))
        texts.push_back(text);
    }
    if (texts.empty())
      throw GrammarError(child(path, key), "no value of the " + key + " can be written as a value of " + xml_->label);
    return one_of_literals(texts);
  }
  return compile_string(s, path, true);
}

int32_t JsonGrammar::xml_text() {
  const std::string key = "xml-text " + xml_->value_end;
  if (const auto it = shared_.find(key); it != shared_.end()) return it->second;
  const int32_t r = b_.text_without(xml_->value_end)[0];
  shared_[key] = r;
  return r;
}

Element JsonGrammar::raw_char(const CodePointRanges& ranges) {
  auto it = raw_chars_.find(ranges);
  if (it == raw_chars_.end()) {
    CodePointRanges without_lt;  // '<' never: so no value end
    for (const auto& [lo, hi] : ranges) {
      if (lo < '<') without_lt.emplace_back(lo, std::min<uint32_t>(hi, '<' - 1));
      if (hi > '<') without_lt.emplace_back(std::max<uint32_t>(lo, '<' + 1), hi);
    }
    int32_t r;
    if (without_lt.empty()) r = b_.add_rule("raw-char", {{b_.bytes(ByteSet{})}});  // matches nothing: pruned
    else r = b_.code_points("raw-char", without_lt);
    it = raw_chars_.emplace(ranges, r).first;
  }
  return GrammarBuilder::ref(it->second);
}

int32_t JsonGrammar::xml_name_other_than(const std::vector<std::string>& names) {
  CodePointRanges name_chars;  // all but the name stops
  uint32_t from = 0;
  std::string stops = xml_->name_stops;
  std::sort(stops.begin(), stops.end());
  for (const char c : stops) {
    const auto stop = static_cast<uint32_t>(static_cast<unsigned char>(c));
    if (stop > from) name_chars.emplace_back(from, stop - 1);
    from = stop + 1;
  }
  name_chars.emplace_back(from, 0x10FFFF);
  return text_other_than(names, name_chars, name_chars, [this](const CodePointRanges& r) {
    return GrammarBuilder::ref(b_.code_points("name-char", r));
  });
}

}  // namespace difftx::grammar
