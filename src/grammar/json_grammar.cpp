// JSON values, objects, arrays, the combinators and $ref (json_grammar.h); strings are in
// json_strings.cpp, numbers in json_numbers.cpp.
#include "grammar/json_grammar.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <unordered_set>

#include "grammar/json_all_of.h"
#include "grammar/json_keywords.h"
#include "io/json_file.h"

namespace difftx::grammar {
namespace {

using json = nlohmann::ordered_json;

constexpr int kTypesBudget = 10000;  // schemas types_of looks at for one question
constexpr size_t kMaxUniqueValues = 64;  // values uniqueItems: true is enforced over
constexpr int64_t kMaxLeast = int64_t{1} << 20;  // items or characters a document may need at least
constexpr int64_t kOneOfBudget = int64_t{1} << 24;  // branch pairs and values one oneOf's check looks at


// Bytes for a message: "'>' or a newline".
std::string byte_list(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    if (!out.empty()) out += " or ";
    out += c == '\n' ? std::string("a newline") : std::string("'") + c + "'";
  }
  return out;
}

[[noreturn]] void error(const std::string& where, const std::string& message) { throw GrammarError(where, message); }

// The names a `propertyNames` schema allows: an enum or const of strings (with type string), in
// their order, each once (values of other types name no key), at most max_names of them; nullopt
// where it allows every name (true, {}, or type string alone).
std::optional<std::vector<std::string>> property_names(const json& s, const std::string& at, int64_t max_names) {
  if (s == json(false)) return std::vector<std::string>{};
  if (!s.is_object()) error(at, "'propertyNames' must be a schema");
  for (const auto& [key, value] : s.items())
    if (!is_annotation(key) && key != "enum" && key != "const" && !(key == "type" && value == "string"))
      error(child(at, key), "'propertyNames' can only be an enum or const of names (with type string)");
  if (s.contains("enum") && s.contains("const")) error(at, "'propertyNames' takes an enum or a const, not both");
  if (!s.contains("enum") && !s.contains("const")) return std::nullopt;
  if (s.contains("enum") && !s["enum"].is_array()) error(child(at, "enum"), "'enum' must be a list");
  const json values = s.contains("enum") ? s["enum"] : json::array({s["const"]});
  if (static_cast<int64_t>(values.size()) > max_names)
    error(at, concat("'propertyNames' lists ", values.size(), " names: at most ", max_names, " can be enforced"));
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const json& v : values)
    if (v.is_string() && seen.insert(v.get<std::string>()).second) names.push_back(v.get<std::string>());
  return names;
}

// A non-negative integer keyword (minItems, maxLength, ...).
int64_t count_keyword(const json& s, const char* key, const std::string& path, int64_t fallback) {
  const auto it = s.find(key);
  if (it == s.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    error(child(path, key),
          concat("'", key, "' must be a non-negative integer, not ", io::json_value_for_message(*it)));
  return it->get<int64_t>();
}

// A type's name as json_types' bits ("number" takes integers too); 0 for none of kTypes.
int type_bits(const std::string& type) {
  for (size_t i = 0; i < kTypes.size(); ++i)
    if (type == kTypes[i]) return i == 5 ? json_types::number | json_types::integer : 1 << i;
  return 0;
}

// Which types a schema's documents may have (schema_types); any once `budget` schemas have been
// looked at (a $ref reached through several branches at every level would be looked at
// exponentially often).
int types_of(const json& s, int depth, const std::function<const json&(const std::string&)>& resolve, int& budget) {
  if (depth > 32 || --budget < 0 || s.is_boolean() || !s.is_object()) return json_types::any;
  if (s.contains("const")) return value_types(s["const"]);
  if (s.contains("enum") && s["enum"].is_array()) {
    int bits = 0;
    for (const json& v : s["enum"]) bits |= value_types(v);
    return bits;
  }
  if (s.contains("$ref") && s["$ref"].is_string())
    return types_of(resolve(s["$ref"].get<std::string>()), depth + 1, resolve, budget);
  for (const char* key : {"anyOf", "oneOf"})
    if (s.contains(key) && s[key].is_array()) {
      int bits = 0;
      for (const json& b : s[key]) bits |= types_of(b, depth + 1, resolve, budget);
      return bits;
    }
  int bits = declared_types(s);  // and, for allOf, the types each of its schemas allows
  if (s.contains("allOf") && s["allOf"].is_array())
    for (const json& b : s["allOf"]) bits &= types_of(b, depth + 1, resolve, budget);
  return bits;
}

// The values a required property is pinned to (its const or enum), or none.
std::optional<json> pinned_values(const json& branch, const std::string& name) {
  if (!branch.is_object() || !branch.contains("required") || !branch["required"].is_array()) return std::nullopt;
  const json& required = branch["required"];
  if (std::find(required.begin(), required.end(), json(name)) == required.end()) return std::nullopt;
  if (!branch.contains("properties") || !branch["properties"].is_object() || !branch["properties"].contains(name))
    return std::nullopt;
  const json& p = branch["properties"][name];
  if (!p.is_object()) return std::nullopt;
  if (p.contains("const")) return json::array({p["const"]});
  if (p.contains("enum") && p["enum"].is_array()) return p["enum"];
  return std::nullopt;
}

}  // namespace

int value_types(const json& v) {
  if (v.is_null()) return json_types::null;
  if (v.is_boolean()) return json_types::boolean;
  if (v.is_object()) return json_types::object;
  if (v.is_array()) return json_types::array;
  if (v.is_string()) return json_types::string;
  const bool integral = v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                                  std::trunc(v.get<double>()) == v.get<double>());
  return integral ? json_types::number | json_types::integer : json_types::number;
}

int schema_types(const json& schema, const json& document) {
  static const json kAnything = true;
  int budget = kTypesBudget;
  return types_of(schema, 0, [&](const std::string& ref) -> const json& {
    try {
      if (!ref.empty() && ref[0] == '#') return document.at(json::json_pointer(ref.substr(1)));
    } catch (const json::exception&) {
    }
    return kAnything;
  }, budget);
}

int declared_types(const json& schema) {
  const auto it = schema.find("type");
  if (it == schema.end()) return json_types::any;
  const auto nullable = schema.find("nullable");
  int bits = nullable != schema.end() && *nullable == true ? json_types::null : 0;
  for (const json& t : it->is_array() ? *it : json::array({*it}))
    if (t.is_string()) bits |= type_bits(t.get<std::string>());
  return bits;
}

std::vector<std::string> type_names(const json& type, const std::string& where) {
  const json list = type.is_array() ? type : json::array({type});
  if (list.empty()) throw GrammarError(where, "'type' must not be an empty list");
  std::vector<std::string> names;
  for (const json& t : list) {
    if (!t.is_string() || std::find(kTypes.begin(), kTypes.end(), t.get<std::string>()) == kTypes.end())
      throw GrammarError(where, "'type' must be one of null, boolean, object, array, string, number, integer, not " +
                                    io::json_value_for_message(t));
    names.push_back(t.get<std::string>());
  }
  return names;
}

namespace {

void append_canonical(const json& v, std::string& out) {
  if (v.is_number_float()) {
    // An integral float within the integers' range is written as that integer, which equals it;
    // any other float as its shortest text, with a point or an exponent no integer has.
    const double x = v.get<double>();
    if (std::trunc(x) == x && x >= -0x1p63 && x < 0x1p63) out += std::to_string(static_cast<int64_t>(x));
    else if (std::trunc(x) == x && x >= 0 && x < 0x1p64) out += std::to_string(static_cast<uint64_t>(x));
    else out += v.dump();
  } else if (v.is_string() || v.is_object()) {  // strings by their bytes (valid UTF-8 or not), length first
    const auto text = [&out](const std::string& t) { out += std::to_string(t.size()) + ":" + t; };
    if (v.is_string()) {
      out += '"';
      text(v.get_ref<const std::string&>());
      return;
    }
    std::vector<std::pair<std::string, const json*>> members;  // in key order: any order is the same object
    for (const auto& [key, value] : v.items()) members.emplace_back(key, &value);
    std::sort(members.begin(), members.end());
    out += '{';
    for (const auto& [key, value] : members) text(key), append_canonical(*value, out), out += ',';
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (const json& item : v) append_canonical(item, out), out += ',';
    out += ']';
  } else {  // null, booleans, integers
    out += v.dump();
  }
}

}  // namespace

std::string canonical_text(const json& value) {
  std::string out;
  append_canonical(value, out);
  return out;
}

bool same_value(const json& a, const json& b) { return canonical_text(a) == canonical_text(b); }

JsonGrammar::JsonGrammar(GrammarBuilder& builder, JsonGrammarOptions options) : b_(builder), o_(options) {}

Element JsonGrammar::ws() {
  auto it = shared_.find("ws");
  if (it == shared_.end()) {
    ByteSet indent;
    indent.add(' ');
    indent.add('\t');
    const int32_t r = b_.add_rule("ws");
    b_.add_alternative(r, {});
    b_.add_alternative(r, b_.literal(" "));
    b_.add_alternative(
        r, {b_.bytes(ByteSet::of('\n')), GrammarBuilder::ref(b_.repeat(b_.bytes(indent), 0, o_.max_indent))});
    it = shared_.emplace("ws", r).first;
  }
  return GrammarBuilder::ref(it->second);
}

Sequence JsonGrammar::value_literal(const json& value) { return b_.literal(literal_text(value)); }

int32_t JsonGrammar::one_of_literals(const std::vector<std::string>& texts) {
  // A trie: one rule per node, an alternative per next byte (and the empty one where a text ends).
  struct Node {
    std::map<uint8_t, int32_t> next;
    bool ends = false;
  };
  std::vector<Node> nodes(1);
  for (const std::string& t : texts) {
    int32_t n = 0;
    for (char c : t) {
      const auto [it, added] = nodes[n].next.emplace(static_cast<uint8_t>(c), static_cast<int32_t>(nodes.size()));
      if (added) nodes.emplace_back();
      n = it->second;
    }
    nodes[n].ends = true;
  }
  std::vector<int32_t> rules(nodes.size());
  for (size_t i = nodes.size(); i-- > 0;) {  // children have larger indices
    rules[i] = b_.add_rule(i == 0 ? "literals" : "literals-tail");
    if (nodes[i].ends) b_.add_alternative(rules[i], {});
    for (const auto& [byte, to] : nodes[i].next)
      b_.add_alternative(rules[i], {b_.bytes(ByteSet::of(byte)), GrammarBuilder::ref(rules[to])});
  }
  return rules[0];
}

int32_t JsonGrammar::any_value() {
  if (const auto it = shared_.find("value"); it != shared_.end()) return it->second;
  const int32_t value = b_.add_rule("value");
  shared_["value"] = value;
  const int32_t array = b_.add_rule("array");
  const int32_t more = b_.add_rule("array-items");
  b_.add_alternative(more,
                     {ws(), b_.bytes(ByteSet::of(',')), ws(), GrammarBuilder::ref(value), GrammarBuilder::ref(more)});
  b_.add_alternative(more, {});
  Sequence open = b_.literal("[");
  open.push_back(ws());
  Sequence empty = open;
  empty.push_back(b_.bytes(ByteSet::of(']')));
  Sequence items = open;
  items.insert(items.end(), {GrammarBuilder::ref(value), GrammarBuilder::ref(more), ws(), b_.bytes(ByteSet::of(']'))});
  b_.add_alternative(array, std::move(empty));
  b_.add_alternative(array, std::move(items));
  for (const int32_t r : {any_object(), array, compile_string(json::object(), "#"), number_any()})
    b_.add_alternative(value, {GrammarBuilder::ref(r)});
  for (const char* literal : {"true", "false", "null"}) b_.add_alternative(value, word(literal));
  return value;
}

int32_t JsonGrammar::any_object() {
  if (const auto it = shared_.find("object"); it != shared_.end()) return it->second;
  const int32_t object = b_.add_rule("object");
  shared_["object"] = object;
  const int32_t value = any_value();
  const int32_t pair = b_.add_rule("pair", {{GrammarBuilder::ref(compile_string(json::object(), "#")), ws(),
                                              b_.bytes(ByteSet::of(':')), ws(), GrammarBuilder::ref(value)}});
  const int32_t more = b_.add_rule("object-pairs");
  b_.add_alternative(more,
                     {ws(), b_.bytes(ByteSet::of(',')), ws(), GrammarBuilder::ref(pair), GrammarBuilder::ref(more)});
  b_.add_alternative(more, {});
  b_.add_alternative(object, {b_.bytes(ByteSet::of('{')), ws(), b_.bytes(ByteSet::of('}'))});
  b_.add_alternative(object, {b_.bytes(ByteSet::of('{')), ws(), GrammarBuilder::ref(pair), GrammarBuilder::ref(more),
                              ws(), b_.bytes(ByteSet::of('}'))});
  return object;
}

int32_t JsonGrammar::schema(const json& s, const std::string& where) { return root(s, where, Members::json); }

int32_t JsonGrammar::root(const json& s, const std::string& where, Members members) {
  document_ = &s;
  where_ = where;
  refs_.clear();
  repeated_ = 1;  // what a schema that threw left
  try {
    return compile(s, where, 0, members);
  } catch (const GrammarError& e) {
    if (!e.where.empty()) throw;
    throw GrammarError(where, e.what());  // a limit the builder hit
  }
}

const json& JsonGrammar::resolve(const std::string& ref, const std::string& path) const {
  if (ref.empty() || ref[0] != '#')
    error(path, "'$ref' \"" + ref + "\" is not a pointer into this schema (only \"#...\" references are supported)");
  try {
    const json& target = document_->at(json::json_pointer(ref.substr(1)));
    return target;
  } catch (const json::exception&) {
    error(path, "'$ref' \"" + ref + "\" points at nothing in the schema");
  }
}

const json& JsonGrammar::dereferenced(const json& schema, const std::string& path) const {
  const json* body = &schema;
  for (int hops = 0; hops < o_.max_schema_depth && body->is_object() && body->contains("$ref") &&
                     (*body)["$ref"].is_string();
       ++hops)
    body = &resolve((*body)["$ref"].get<std::string>(), path);
  return *body;
}

int32_t JsonGrammar::compile_ref(const std::string& ref, const std::string& path, int depth) {
  if (const auto it = refs_.find(ref); it != refs_.end()) return it->second;
  const json& target = resolve(ref, path);
  // Declared before its body is compiled, so that recursive references find it.
  const int32_t rule = b_.add_rule("ref");
  refs_.emplace(ref, rule);
  b_.add_alternative(rule, {GrammarBuilder::ref(compile(target, where_ + ref.substr(1), depth + 1))});
  return rule;
}

int32_t JsonGrammar::compile(const json& s, const std::string& path, int depth, Members members) {
  if (depth > o_.max_schema_depth) error(path, concat("schemas nested deeper than ", o_.max_schema_depth, " levels"));
  // Keyword arguments and XML parameters: the root is an object's schema.
  const bool object_root = members != Members::json;
  const auto not_object = [&](const std::string& where) {
    error(where, (members == Members::keywords ? std::string("keyword arguments") : xml_->label) +
                     " need a schema of \"type\": \"object\" at the root");
  };
  if (object_root && !s.is_object()) not_object(path);
  if (s.is_boolean()) {
    if (s.get<bool>()) return any_value();
    error(path, "the schema false matches no document");
  }
  if (!s.is_object()) error(path, "a schema must be an object or a boolean, not " + io::json_value_for_message(s));
  if (const auto it = s.find("nullable"); it != s.end()) {
    // OpenAPI 3.0's, as ajv reads it: "null" added to `type` (an enum or const still decides).
    if (!it->is_boolean()) error(child(path, "nullable"), "'nullable' must be a boolean");
    json rest = s;
    rest.erase("nullable");
    if (it->get<bool>()) {
      if (object_root) error(child(path, "nullable"), "the arguments' object cannot be null");
      if (!s.contains("type")) error(child(path, "nullable"), "'nullable': true needs 'type' beside it");
      std::vector<std::string> types = type_names(s["type"], child(path, "type"));
      if (std::find(types.begin(), types.end(), "null") == types.end()) types.push_back("null");
      rest["type"] = types;
    }
    return compile(rest, path, depth, members);
  }
  // ajv resolves a $ref against the nearest $id above it: only the root's is the base $ref takes.
  if (s.contains("$id") && depth > 0 && &s != document_)
    error(child(path, "$id"), "'$id' below the root cannot be enforced: it changes what '$ref' resolves against");
  std::set<std::string> present;  // the keywords that assert something
  for (const auto& [key, value] : s.items()) {
    if (is_annotation(key) || key == "discriminator") continue;
    if (!kKeywords.count(key))
      error(child(path, key), "the keyword '" + key + "' is not supported: it cannot be enforced");
    present.insert(key);
    if (object_root && (key == "$ref" || key == "allOf" || key == "anyOf" || key == "oneOf" || key == "enum" ||
                        key == "const"))
      not_object(child(path, key));
  }
  const auto only = [&](const std::set<std::string>& allowed, const std::string& keyword) {
    for (const std::string& k : present)
      if (k != keyword && !allowed.count(k))
        error(child(path, k), "'" + k + "' beside '" + keyword + "' cannot be enforced (give it inside the branches)");
  };
  if (present.count("$ref")) {
    only({}, "$ref");
    if (!s["$ref"].is_string()) error(child(path, "$ref"), "'$ref' must be a string");
    return compile_ref(s["$ref"].get<std::string>(), child(path, "$ref"), depth);
  }
  if (present.count("allOf")) {
    const json merged = merge_all_of(s, path, [&](const json& x, const std::string& at) -> const json& {
      return dereferenced(x, at);
    });
    return compile(merged, child(path, "allOf"), depth + 1);
  }
  if (s.contains("discriminator")) check_discriminator(s, path);
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!present.count(key)) continue;
    only({}, key);
    const json& branches = s[key];
    const std::string at = child(path, key);
    if (!branches.is_array() || branches.empty())
      error(at, std::string("'") + key + "' must be a non-empty list of schemas");
    if (std::string(key) == "oneOf") check_one_of(branches, at, depth);
    const int32_t rule = b_.add_rule(key);
    for (size_t i = 0; i < branches.size(); ++i)
      b_.add_alternative(rule, {GrammarBuilder::ref(compile(branches[i], child(at, std::to_string(i)), depth + 1))});
    return rule;
  }
  if (present.count("enum") || present.count("const")) {
    const std::string key = present.count("const") ? "const" : "enum";
    only({"type"}, key);
    if (present.count("enum") && present.count("const")) error(child(path, "enum"), "'enum' beside 'const'");
    const json values = key == "const" ? json::array({s["const"]}) : s["enum"];
    if (!values.is_array() || values.empty()) error(child(path, "enum"), "'enum' must be a non-empty list");
    return compile_enum(values, s, child(path, key));
  }
  // The types: as given, else as the keywords imply, else any value.
  std::vector<std::string> types;
  if (const auto it = s.find("type"); it != s.end()) {
    types = type_names(*it, child(path, "type"));
  } else {
    const auto uses = [&](const std::set<std::string, std::less<>>& keys) {
      return std::any_of(present.begin(), present.end(), [&](const std::string& k) { return keys.count(k) > 0; });
    };
    if (uses(kObjectKeywords)) types.push_back("object");
    if (uses(kArrayKeywords)) types.push_back("array");
    if (uses(kStringKeywords)) types.push_back("string");
    if (uses(kNumberKeywords)) types.push_back("number");
    if (types.empty() && !object_root) return any_value();
  }
  if (object_root) {
    if (types != std::vector<std::string>{"object"} && !types.empty()) not_object(child(path, "type"));
    return compile_object(s, path, depth, members);
  }
  if (present.count("format") && std::none_of(types.begin(), types.end(), [](const std::string& t) {
        return t == "string" || t == "number" || t == "integer";
      }))
    error(child(path, "format"), "'format' on a value that is no string or number cannot be enforced");
  const int32_t rule = b_.add_rule("type");
  for (const std::string& t : types) {
    int32_t r;
    if (t == "null") r = b_.add_rule("null", {word("null")});
    else if (t == "boolean") r = b_.add_rule("boolean", {word("true"), word("false")});
    else if (t == "object") r = compile_object(s, path, depth);
    else if (t == "array") r = compile_array(s, path, depth);
    else if (t == "string") r = compile_string(s, path);
    else r = compile_number(s, path, t == "integer");
    b_.add_alternative(rule, {GrammarBuilder::ref(r)});
  }
  return rule;
}

int32_t JsonGrammar::compile_enum(const json& values, const json& s, const std::string& path) {
  if (static_cast<int64_t>(values.size()) > o_.max_enum_values)
    error(path, concat("'enum' has ", values.size(), " values; at most ", o_.max_enum_values, " are supported"));
  // Values of another type than `type` allows can never validate: left out.
  const int allowed = declared_types(s);
  std::vector<std::string> texts;
  int64_t bytes = 0;
  for (const json& v : values) {
    if (!(value_types(v) & allowed)) continue;
    std::string text;
    try {
      text = literal_text(v);
    } catch (const json::exception&) {
      error(path, "an enum value holds a string that is not valid UTF-8");
    }
    bytes += static_cast<int64_t>(text.size());
    if (bytes > o_.max_enum_bytes) error(path, concat("the enum values exceed ", o_.max_enum_bytes, " bytes of JSON"));
    texts.push_back(std::move(text));
  }
  if (texts.empty()) error(path, "no value of the enum has the schema's type");
  return one_of_literals(texts);
}

void JsonGrammar::check_discriminator(const json& s, const std::string& path) const {
  // OpenAPI's discriminator (pydantic's discriminated unions): a property every oneOf branch
  // requires as a const names the branch. oneOf already picks that branch, so the keyword adds
  // nothing to enforce once that holds (and the mapping names each tag's own branch).
  const std::string at = child(path, "discriminator");
  const json& d = s["discriminator"];
  if (!s.contains("oneOf") || !s["oneOf"].is_array()) error(at, "'discriminator' is read beside 'oneOf' only");
  if (!d.is_object() || !d.contains("propertyName") || !d["propertyName"].is_string())
    error(at, "'discriminator' must be an object with a string 'propertyName'");
  const std::string name = d["propertyName"];
  std::map<std::string, std::string> tags;  // a branch's tag -> its $ref ("" where it has none)
  for (const json& branch : s["oneOf"]) {
    const json& b = dereferenced(branch, child(path, "oneOf"));
    const std::optional<json> pinned = pinned_values(b, name);  // required, with a const or an enum
    if (!pinned || !b["properties"][name].contains("const") || !(*pinned)[0].is_string())
      error(at, "every 'oneOf' branch must require '" + name + "' as a string 'const' for the discriminator");
    const bool ref = branch.is_object() && branch.contains("$ref") && branch["$ref"].is_string();
    tags[(*pinned)[0].get<std::string>()] = ref ? branch["$ref"].get<std::string>() : "";
  }
  if (const auto mapping = d.find("mapping"); mapping != d.end()) {
    if (!mapping->is_object()) error(child(at, "mapping"), "'mapping' must be an object");
    for (const auto& [tag, target] : mapping->items())
      if (!tags.count(tag) || target != tags[tag])
        error(child(at, "mapping"), "'mapping' sends '" + tag + "' to " + io::json_value_for_message(target) +
                                        ", not to the branch whose '" + name + "' it is");
  }
}

void JsonGrammar::check_one_of(const json& branches, const std::string& path, int depth) {
  const auto resolve_ref = [this, &path](const std::string& ref) -> const json& { return resolve(ref, path); };
  int budget = kTypesBudget;
  std::vector<int> types;
  // Per branch (itself where it is a reference: pydantic's unions), the values each required
  // property is pinned to, as canonical texts (enums past the limit refused before they are read).
  std::vector<std::map<std::string, std::unordered_set<std::string>>> pinned(branches.size());
  for (size_t i = 0; i < branches.size(); ++i) {
    types.push_back(types_of(branches[i], depth, resolve_ref, budget));
    const json& b = dereferenced(branches[i], path);
    if (!(types[i] & json_types::object) || !b.is_object() || !b.contains("properties") || !b["properties"].is_object())
      continue;
    for (const auto& [name, _] : b["properties"].items()) {
      const auto values = pinned_values(b, name);
      if (!values) continue;
      if (static_cast<int64_t>(values->size()) > o_.max_enum_values)
        error(child(child(child(path, std::to_string(i)), "properties"), name),
              concat("'enum' has ", values->size(), " values; at most ", o_.max_enum_values, " are supported"));
      auto& texts = pinned[i][name];
      for (const json& v : *values) texts.insert(canonical_text(v));
    }
  }
  int64_t work = kOneOfBudget;  // pairs and values looked up
  for (size_t i = 0; i < branches.size(); ++i)
    for (size_t j = i + 1; j < branches.size(); ++j) {
      if (--work < 0) error(path, concat("'oneOf' of ", branches.size(), " branches is too large to check"));
      if (!(types[i] & types[j])) continue;
      // Both may be objects only: disjoint if some required property is pinned to disjoint values.
      bool disjoint = false;
      if ((types[i] & types[j]) == json_types::object)
        for (const auto& [name, a] : pinned[i]) {
          const auto it = pinned[j].find(name);
          if (it == pinned[j].end()) continue;
          const auto* fewer = &a;
          const auto* more = &it->second;
          if (fewer->size() > more->size()) std::swap(fewer, more);
          work -= static_cast<int64_t>(fewer->size());
          disjoint = std::none_of(fewer->begin(), fewer->end(), [&](const std::string& v) { return more->count(v); });
          if (disjoint) break;
        }
      if (!disjoint)
        error(path, concat("'oneOf' branches ", i, " and ", j, " may both match one document, which oneOf forbids; "
                           "use anyOf, or make them differ in type or in a required property's const"));
    }
}

int32_t JsonGrammar::compile_object(const json& s, const std::string& path, int depth, Members members) {
  const bool keywords = members == Members::keywords;
  // The properties in order, required or not; names `required` lists beyond them follow.
  struct Property {
    std::string name;
    const json* schema;
    std::string path;
    bool required;
  };
  std::vector<Property> props;
  std::set<std::string> required;
  if (const auto it = s.find("required"); it != s.end()) {
    if (!it->is_array()) error(child(path, "required"), "'required' must be a list of property names");
    for (const json& n : *it) {
      if (!n.is_string()) error(child(path, "required"), "'required' must be a list of property names");
      required.insert(n.get<std::string>());
    }
  }
  // The schema of additional properties; none: no others. Absent, JSON Schema allows any: taken
  // as none where `properties` lists some (the model writes those), as any where it lists none.
  static const json kAnything = true;
  const json* extra = s.contains("properties") ? nullptr : &kAnything;
  if (const auto it = s.find("additionalProperties"); it != s.end()) {
    if (it->is_boolean()) extra = it->get<bool>() ? &kAnything : nullptr;
    else if (it->is_object()) extra = &*it;
    else error(child(path, "additionalProperties"), "'additionalProperties' must be a boolean or a schema");
  }
  std::set<std::string> listed;
  if (const auto it = s.find("properties"); it != s.end()) {
    if (!it->is_object()) error(child(path, "properties"), "'properties' must be an object");
    for (const auto& [name, schema] : it->items()) {
      props.push_back({name, &schema, child(child(path, "properties"), name), required.count(name) > 0});
      listed.insert(name);
    }
  }
  for (const std::string& name : required) {
    if (listed.count(name)) continue;
    if (!extra)
      error(child(path, "required"), "'required' names '" + name +
                                         "', which 'properties' does not list and additionalProperties forbids");
    props.push_back({name, extra, child(path, "additionalProperties"), true});
  }
  // propertyNames as an enum or const of names, as pydantic and zod write a dict keyed by a
  // Literal or an Enum: those are the only keys, each at most once, so the ones `properties` does
  // not list become optional properties of the additional properties' schema, in their order.
  if (const auto it = s.find("propertyNames"); it != s.end() && *it != json(true)) {
    const std::string at = child(path, "propertyNames");
    // pydantic refers to an Enum's schema: {"$ref": "#/$defs/Subject"}.
    if (const auto allowed = property_names(dereferenced(*it, at), at, o_.max_enum_values)) {
      const std::set<std::string> allows(allowed->begin(), allowed->end());
      for (const Property& p : props)
        if (p.required && !allows.count(p.name))
          error(at, "'" + p.name + "' is required, but 'propertyNames' does not allow it");
      std::erase_if(props, [&](const Property& p) { return !allows.count(p.name); });
      std::set<std::string> present;
      for (const Property& p : props) present.insert(p.name);
      if (extra)
        for (const std::string& name : *allowed)
          if (!present.count(name)) props.push_back({name, extra, child(path, "additionalProperties"), false});
      extra = nullptr;
    }
  }
  // A member: "name": value, name=value as a keyword argument, or an XML parameter.
  const auto member = [&](const char* rule, Sequence key, int32_t value) {
    Sequence seq;
    if (members == Members::xml) {
      for (const Sequence& part : {xml_->open, key, xml_->middle, Sequence{GrammarBuilder::ref(value)}, xml_->close})
        seq.insert(seq.end(), part.begin(), part.end());
      return b_.add_rule(rule, {std::move(seq)});
    }
    seq = std::move(key);
    if (keywords) seq.push_back(b_.bytes(ByteSet::of('=')));
    else seq.insert(seq.end(), {ws(), b_.bytes(ByteSet::of(':')), ws()});
    seq.push_back(GrammarBuilder::ref(value));
    return b_.add_rule(rule, {std::move(seq)});
  };
  const auto value_of = [&](const json& schema, const std::string& at) {
    return members == Members::xml ? xml_value(schema, at, depth + 1) : compile(schema, at, depth + 1);
  };
  std::vector<int32_t> kv;
  for (const Property& p : props) {
    if (members == Members::keywords && !python_keyword_name(p.name))
      error(p.path, "'" + p.name + "' cannot be a keyword argument: it is no Python identifier, or a keyword");
    if (members == Members::xml && p.name.find_first_of(xml_->name_stops) != std::string::npos)
      error(p.path, "'" + p.name + "' cannot name one of " + xml_->label + ": it holds " +
                        byte_list(xml_->name_stops));
    const int32_t value = value_of(*p.schema, p.path);
    kv.push_back(member("property",
                        members != Members::json
                            ? b_.literal(p.name)
                            : b_.literal(json(p.name).dump(-1, ' ', false, json::error_handler_t::strict)),
                        value));
  }
  std::optional<int32_t> extra_pair;
  std::vector<std::string> names(listed.begin(), listed.end());
  for (const Property& p : props) names.push_back(p.name);
  if (extra) {
    const int32_t key = members == Members::keywords ? identifier_other_than(names)
                        : members == Members::xml    ? xml_name_other_than(names)
                                                     : key_other_than(names);
    extra_pair = member(keywords ? "extra-keyword" : "extra-property", {GrammarBuilder::ref(key)},
                        value_of(*extra, child(path, "additionalProperties")));
  }
  // XML parameters end with a newline: nothing between them.
  const Sequence comma = members == Members::xml ? Sequence{} : Sequence{ws(), b_.bytes(ByteSet::of(',')), ws()};
  // How many members: [minProperties, maxProperties], counted up to `cap` (maxProperties, or
  // minProperties where there is no maximum: past it any number will do). Additional properties'
  // keys only differ from the listed names, not from each other, so toward minProperties they
  // count as one at most (two could be one key written twice); toward maxProperties each counts.
  const int64_t lo = count_keyword(s, "minProperties", path, 0), hi = count_keyword(s, "maxProperties", path, -1);
  const int64_t limit = b_.limits().max_repeat;
  if (lo > limit || hi > limit)
    error(child(path, hi > limit ? "maxProperties" : "minProperties"), concat("more than ", limit, " properties cannot be enforced"));
  const size_t n = props.size();
  const auto required_count = static_cast<int64_t>(
      std::count_if(props.begin(), props.end(), [](const Property& p) { return p.required; }));
  if (hi >= 0 && hi < lo) error(child(path, "maxProperties"), concat("'maxProperties' ", hi, " is below 'minProperties' ", lo));
  if (hi >= 0 && hi < required_count)
    error(child(path, "maxProperties"), concat("'maxProperties' ", hi, " is below the ", required_count, " required properties"));
  const int64_t reachable = static_cast<int64_t>(n) + (extra ? 1 : 0);
  if (lo > reachable)
    error(child(path, "minProperties"),
          concat("'minProperties' ", lo, " is more than the ", n, " listed properties", extra ? " and one additional one" : "",
                 extra ? " (additional ones could repeat a key)" : ""));
  const int64_t cap = hi >= 0 ? hi : lo;
  if (cap > 0 && static_cast<double>(n + 1) * static_cast<double>(cap + 1) > static_cast<double>(limit))
    error(child(path, hi >= 0 ? "maxProperties" : "minProperties"),
          concat("counting up to ", cap, " of ", n, " properties cannot be enforced (at most ", limit, " states)"));
  const auto next = [&](int64_t c) { return std::min(c + 1, cap); };
  const auto room = [&](int64_t c) { return hi < 0 || c < hi; };  // whether one more member fits
  const auto rule_of = [&](const char* name, std::vector<Sequence> alternatives) -> std::optional<int32_t> {
    if (alternatives.empty()) return std::nullopt;  // no document goes this way
    return b_.add_rule(name, std::move(alternatives));
  };
  const auto then = [&](Sequence seq, int32_t member, int32_t rest) {
    seq.insert(seq.end(), {GrammarBuilder::ref(member), GrammarBuilder::ref(rest)});
    return seq;
  };
  // after[i][c]: the members from property i on, c written (at least one, so each starts with a
  // comma); first[i]: before any (none when no member can follow). The additional properties
  // come last, any number of them, where the listed ones and the first of them reach
  // minProperties: more[c], c members written, minProperties reached.
  std::vector<std::vector<std::optional<int32_t>>> after(n + 1, std::vector<std::optional<int32_t>>(cap + 1));
  std::vector<int32_t> more;
  std::vector<std::optional<int32_t>> first(n + 1);
  if (extra_pair) {
    for (int64_t c = 0; c <= cap; ++c) more.push_back(b_.add_rule("object-extras"));
    for (int64_t c = 0; c <= cap; ++c) {
      b_.add_alternative(more[c], {});
      if (room(c)) b_.add_alternative(more[c], then(comma, *extra_pair, more[next(c)]));
    }
  }
  for (int64_t c = 0; c <= cap; ++c) {  // the listed members written: c of them, at least one
    std::vector<Sequence> alternatives;
    if (c >= lo) alternatives.push_back({});
    if (extra_pair && room(c) && c + 1 >= lo) alternatives.push_back(then(comma, *extra_pair, more[next(c)]));
    after[n][c] = rule_of("object-end", std::move(alternatives));
  }
  if (extra_pair && room(0) && lo <= 1) first[n] = rule_of("object-extras", {then({}, *extra_pair, more[next(0)])});
  for (size_t i = n; i-- > 0;) {
    for (int64_t c = cap; c >= 0; --c) {
      std::vector<Sequence> alternatives;
      if (room(c) && after[i + 1][next(c)]) alternatives.push_back(then(comma, kv[i], *after[i + 1][next(c)]));
      if (!props[i].required && after[i + 1][c]) alternatives.push_back({GrammarBuilder::ref(*after[i + 1][c])});
      after[i][c] = rule_of("object-rest", std::move(alternatives));
    }
    std::vector<Sequence> alternatives;
    if (room(0) && after[i + 1][next(0)]) alternatives.push_back(then({}, kv[i], *after[i + 1][next(0)]));
    if (!props[i].required && first[i + 1]) alternatives.push_back({GrammarBuilder::ref(*first[i + 1])});
    first[i] = rule_of("object-members", std::move(alternatives));
  }
  const bool can_be_empty = lo == 0 && required_count == 0;
  if (!can_be_empty && !first[0])
    error(path, "no object has the properties that 'minProperties' and 'maxProperties' ask for");
  if (members == Members::xml) {  // the members alone: the call's tags are around them
    const int32_t parameters = b_.add_rule("parameters");
    if (can_be_empty) b_.add_alternative(parameters, {});
    if (first[0]) b_.add_alternative(parameters, {GrammarBuilder::ref(*first[0])});
    return parameters;
  }
  const Element open = b_.bytes(ByteSet::of(keywords ? '(' : '{')), close = b_.bytes(ByteSet::of(keywords ? ')' : '}'));
  const int32_t object = b_.add_rule(keywords ? "arguments" : "object");
  if (can_be_empty) b_.add_alternative(object, {open, ws(), close});
  if (first[0]) b_.add_alternative(object, {open, ws(), GrammarBuilder::ref(*first[0]), ws(), close});
  return object;
}

void JsonGrammar::check_least(int64_t count, const std::string& where, const char* what) const {
  if (count > 0 && repeated_ > kMaxLeast / count)
    error(where, concat("documents would need at least ", count, " ", what,
                        repeated_ > 1 ? concat(" in each of ", repeated_, " places (minItems around it)") : "",
                        ": more than ", kMaxLeast, " cannot be finished"));
}

int32_t JsonGrammar::compile_array(const json& s, const std::string& path, int depth) {
  const int64_t min = count_keyword(s, "minItems", path, 0);
  const int64_t max = count_keyword(s, "maxItems", path, -1);
  if (max >= 0 && max < min) error(child(path, "maxItems"), concat("'maxItems' ", max, " is below 'minItems' ", min));
  const int64_t limit = b_.limits().max_repeat;
  if (min > limit || max > limit)
    error(child(path, max > limit ? "maxItems" : "minItems"), concat("more than ", limit, " items cannot be enforced"));
  check_least(min, child(path, "minItems"), "items");
  if (const auto it = s.find("uniqueItems"); it != s.end() && *it != false) {
    if (*it != true) error(child(path, "uniqueItems"), "'uniqueItems' must be a boolean");
    return unique_array(s, path, depth, min, max);
  }
  // A tuple's first items, each its own schema: prefixItems (draft 2020-12), with `items` for the
  // items after them; or, in the drafts before, `items` as a list, with `additionalItems`.
  const std::string prefix_key = s.contains("prefixItems") ? "prefixItems" : "items";
  const auto prefix_it = s.find(prefix_key);
  const bool tuple = prefix_it != s.end() && prefix_it->is_array();
  if (s.contains("prefixItems") && !tuple) error(child(path, "prefixItems"), "'prefixItems' must be a list of schemas");
  // additionalItems means something beside an items list only; elsewhere it is ignored, as the
  // drafts that have it say.
  const std::string rest_key = tuple && prefix_key == "items" ? "additionalItems" : "items";
  const Element open = b_.bytes(ByteSet::of('[')), close = b_.bytes(ByteSet::of(']'));
  const Element comma = b_.bytes(ByteSet::of(','));
  std::vector<int32_t> prefix;
  if (tuple)
    for (size_t i = 0; i < prefix_it->size(); ++i)
      prefix.push_back(compile((*prefix_it)[i], child(child(path, prefix_key), std::to_string(i)), depth + 1));
  const auto count = static_cast<int64_t>(prefix.size());
  std::optional<int32_t> item;  // the items after the prefix (none: no more may come)
  if (const auto it = s.find(rest_key); it == s.end()) {
    item = any_value();
  } else if (*it != false) {
    // The items' schema: in each place, as often as minItems asks for at least.
    const int64_t outer_repeated = repeated_;
    repeated_ *= std::max<int64_t>(min - count, 1);
    item = compile(*it, child(path, rest_key), depth + 1);
    repeated_ = outer_repeated;
  }
  if (!item && min > count)
    error(child(path, rest_key), concat("'", rest_key, "': false allows ", count, " items, but 'minItems' asks for ", min));
  // after(i): what may follow the first i items. From the prefix's end on (and after the first item
  // where there is no prefix): more items within the counts, then the end.
  const int64_t rest_from = std::max<int64_t>(count, 1);
  int32_t after = b_.add_rule("array-end", {{ws(), close}});
  if (item) {
    const int32_t next = b_.add_rule("array-item", {{ws(), comma, ws(), GrammarBuilder::ref(*item)}});
    const int32_t more = b_.repeat(GrammarBuilder::ref(next), std::max<int64_t>(min - rest_from, 0),
                                   max < 0 ? -1 : std::max<int64_t>(max - rest_from, 0));
    after = b_.add_rule("array-rest", {{GrammarBuilder::ref(more), ws(), close}});
  }
  for (int64_t i = count - 1; i >= 1; --i) {  // inside the prefix, back to front
    const int32_t within = b_.add_rule("array-tuple");
    if (i >= min) b_.add_alternative(within, {ws(), close});
    if (max < 0 || i < max)
      b_.add_alternative(within, {ws(), comma, ws(), GrammarBuilder::ref(prefix[i]), GrammarBuilder::ref(after)});
    after = within;
  }
  const int32_t array = b_.add_rule("array");
  if (min == 0) b_.add_alternative(array, {open, ws(), close});
  if (max != 0 && (count > 0 || item))
    b_.add_alternative(array, {open, ws(), GrammarBuilder::ref(count > 0 ? prefix[0] : *item), GrammarBuilder::ref(after)});
  return array;
}

int32_t JsonGrammar::unique_array(const json& s, const std::string& path, int depth, int64_t min, int64_t max) {
  // The values an item may take: an enum's, a const, booleans or null (of the types `type` allows).
  const std::string at = child(path, "uniqueItems");
  const auto refuse = [&] {
    error(at, "'uniqueItems': true is enforced where every item is one of an enum's values, a const, a boolean or "
              "null, without a tuple");
  };
  if (s.contains("prefixItems") || !s.contains("items") || s["items"].is_array()) refuse();
  compile(s["items"], child(path, "items"), depth + 1);  // the schema's checks ($ref's, enum's, type's)
  const json& items = dereferenced(s["items"], child(path, "items"));
  if (!items.is_object()) refuse();
  for (const auto& [key, value] : items.items())
    if (!is_annotation(key) && key != "enum" && key != "const" && key != "type") refuse();
  json values = json::array();
  if (items.contains("const")) values.push_back(items["const"]);
  else if (items.contains("enum")) values = items["enum"];
  else if (items.contains("type") && items["type"] == "boolean") values = json::array({false, true});
  else if (items.contains("type") && items["type"] == "null") values = json::array({nullptr});
  else refuse();
  const int allowed = declared_types(items);
  std::vector<Element> texts;  // the distinct values, in order, each a rule of its bytes (never a control token)
  json kept = json::array();
  for (const json& v : values) {
    if (!(value_types(v) & allowed) ||
        std::any_of(kept.begin(), kept.end(), [&](const json& k) { return same_value(k, v); }))
      continue;
    if (kept.size() == kMaxUniqueValues)
      error(at, concat("'uniqueItems': true over more than ", kMaxUniqueValues, " values cannot be enforced"));
    kept.push_back(v);
    texts.push_back(GrammarBuilder::ref(one_of_literals({literal_text(v)})));
  }
  const auto n = static_cast<int64_t>(texts.size());
  if (min > n) error(child(path, "minItems"), concat("'minItems' ", min, " asks for more distinct items than the ", n,
                                                     " values the items may take"));
  const int64_t most = max < 0 ? n : std::min(max, n);
  // The values in their order, each present or not (every such array is one the schema allows):
  // next[c] after value k is what may follow once the values before k are written or skipped and
  // c of them written.
  const Element close = b_.bytes(ByteSet::of(']')), comma = b_.bytes(ByteSet::of(','));
  std::vector<std::optional<int32_t>> next(most + 1);
  for (int64_t c = min; c <= most; ++c)
    next[c] = b_.add_rule("unique-end", c == 0 ? std::vector<Sequence>{{close}} : std::vector<Sequence>{{ws(), close}});
  for (int64_t k = n - 1; k >= 0; --k) {
    std::vector<std::optional<int32_t>> here(most + 1);
    for (int64_t c = 0; c <= std::min(most, k); ++c) {  // c of the k values before this one written
      if (c + (n - k) < min) continue;                  // too few values left to reach min
      std::vector<Sequence> alternatives;
      if (next[c]) alternatives.push_back({GrammarBuilder::ref(*next[c])});
      if (c < most && next[c + 1]) {
        Sequence take = c == 0 ? Sequence{} : Sequence{ws(), comma, ws()};
        take.push_back(texts[k]);
        take.push_back(GrammarBuilder::ref(*next[c + 1]));
        alternatives.push_back(std::move(take));
      }
      if (!alternatives.empty()) here[c] = b_.add_rule("unique-items", alternatives);
    }
    next = std::move(here);
  }
  if (!next[0]) error(at, "no array of distinct items fits the item counts");
  return b_.add_rule("unique-array", {{b_.bytes(ByteSet::of('[')), ws(), GrammarBuilder::ref(*next[0])}});
}

json parse_schema_text(std::string_view text, const std::string& source) {
  io::parse_json_text(text, source);  // bounded depth, unique keys, no NUL
  return json::parse(text);
}

std::shared_ptr<const Grammar> json_schema_grammar(const json& schema, JsonGrammarOptions options,
                                                   GrammarLimits limits) {
  GrammarBuilder b(limits);
  JsonGrammar j(b, options);
  const int32_t document = j.schema(schema);
  const int32_t root = b.add_rule("root", {{j.ws(), GrammarBuilder::ref(document)}});
  try {
    return b.build(root);
  } catch (const GrammarError& e) {
    throw GrammarError("#", e.what());
  }
}

}  // namespace difftx::grammar
