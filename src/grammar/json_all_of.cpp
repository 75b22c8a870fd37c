// allOf merged into one schema (json_all_of.h).
#include "grammar/json_all_of.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/json_grammar.h"
#include "grammar/json_keywords.h"
#include "io/json_file.h"

namespace difftx::grammar {
namespace {

using json = nlohmann::ordered_json;

constexpr int kMaxDepth = 32;         // allOf within allOf (through $refs too)
constexpr size_t kMaxBranches = 256;  // one allOf's branches, flattened
constexpr int kMaxMerged = 1024;      // schemas merged for one allOf, its distributed choices' included
constexpr int64_t kMaxCopied = 1 << 24;  // bytes of schema text (about) copied for one allOf
constexpr size_t kMaxValues = 4096;      // an enum's values (JsonGrammarOptions::max_enum_values' default)

[[noreturn]] void fail(const std::string& where, const std::string& message) { throw GrammarError(where, message); }

// A merge no document satisfies (no type or no value in common): a product of distributed choices
// that is left out where others remain.
struct Unsatisfiable : GrammarError {
  using GrammarError::GrammarError;
};

// What one allOf may cost: merges, and the schemas copied into their results.
struct Budget {
  int merges = kMaxMerged;
  int64_t copied = kMaxCopied;
};

// About the bytes of a value's text, counted up to `limit`.
int64_t text_bytes(const json& v, int64_t limit) {
  if (v.is_string()) return static_cast<int64_t>(v.get_ref<const std::string&>().size()) + 2;
  if (!v.is_structured()) return 8;
  int64_t n = 2;
  for (const auto& [key, value] : v.items()) {
    n += static_cast<int64_t>(key.size()) + 4 + text_bytes(value, limit - n);
    if (n > limit) break;
  }
  return n;
}

void spend(Budget& budget, const json& copied, const std::string& path) {
  budget.copied -= text_bytes(copied, budget.copied + 1);
  if (budget.copied < 0)
    fail(path, concat("allOf whose merge copies more than ", kMaxCopied, " bytes of schemas (its anyOf / oneOf "
                      "distributed over its other schemas)"));
}

struct Branch {
  const json* schema;
  std::string path;
};

// The branches of an allOf, nested allOfs and $refs followed: every schema whose keywords apply.
void collect(const json& s, const std::string& path, const Dereference& dereference, int depth,
             std::vector<Branch>& out, size_t& seen) {
  if (depth > kMaxDepth) fail(path, concat("allOf nested deeper than ", kMaxDepth, " levels"));
  if (++seen > kMaxBranches) fail(path, concat("allOf of more than ", kMaxBranches, " schemas"));
  std::string at = path;
  if (s.is_object() && s.contains("$ref")) {
    for (const auto& [key, value] : s.items())
      if (key != "$ref" && !is_annotation(key))
        fail(child(path, key), "'" + key + "' beside '$ref' cannot be enforced (give it inside the branches)");
    at = child(path, "$ref");
  }
  const json& d = dereference(s, at);
  if (d.is_boolean()) {
    if (d.get<bool>()) return;
    fail(at, "the schema false matches no document, so neither does the allOf that holds it");
  }
  if (!d.is_object()) fail(at, "a schema must be an object or a boolean, not " + io::json_value_for_message(d));
  if (depth > 0 && d.contains("$id"))  // as JsonGrammar: a base for $ref other than the root's
    fail(child(at, "$id"), "'$id' below the root cannot be enforced: it changes what '$ref' resolves against");
  out.push_back({&d, at});  // its keywords beside allOf
  if (!d.contains("allOf")) return;
  const json& all = d["allOf"];
  const std::string list = child(at, "allOf");
  if (!all.is_array() || all.empty()) fail(list, "'allOf' must be a non-empty list of schemas");
  for (size_t i = 0; i < all.size(); ++i)
    collect(all[i], child(list, std::to_string(i)), dereference, depth + 1, out, seen);
}

// The type names both lists allow ("integer" where one says integer and the other number).
std::vector<std::string> common_types(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const auto has = [](const std::vector<std::string>& v, const char* t) {
    return std::count(v.begin(), v.end(), t) > 0;
  };
  std::vector<std::string> out;
  for (const std::string& t : a) {
    if (has(b, t.c_str())) out.push_back(t);
    else if (t == "integer" && has(b, "number")) out.push_back(t);
    else if (t == "number" && has(b, "integer")) out.push_back("integer");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The branches' keywords, gathered one by one.
class Merge {
 public:
  explicit Merge(const std::string& path) : path_(path) {}

  void add(const Branch& b) {
    const json& s = *b.schema;
    for (const auto& [key, value] : s.items()) {
      const std::string at = child(b.path, key);
      if (is_annotation(key) || key == "allOf") continue;
      if (key == "discriminator") {
        agree(key, value, at, "'" + key + "' in two schemas of one allOf cannot be merged");
      } else if (!kKeywords.count(key)) {
        fail(at, "the keyword '" + key + "' is not supported: it cannot be enforced");
      } else if (key == "type") {
        const std::vector<std::string> names = type_names(value, at);
        types_ = types_ ? common_types(*types_, names) : names;
        if (types_->empty()) throw Unsatisfiable(at, "allOf's schemas allow no type in common");
      } else if (key == "properties") {
        if (!value.is_object()) fail(at, "'properties' must be an object");
        for (const auto& [name, schema] : value.items()) {
          if (!properties_.count(name)) names_.push_back(name);
          properties_[name].push_back(schema);
        }
      } else if (key == "required") {
        if (!value.is_array()) fail(at, "'required' must be a list of names");
        for (const json& name : value)
          if (required_names_.insert(canonical_text(name)).second) required_.push_back(name);
      } else if (key == "additionalProperties") {
        if (value.is_object()) fail(at, "an 'additionalProperties' schema inside allOf cannot be merged");
        if (value == json(false)) {
          std::set<std::string> listed;
          if (s.contains("properties") && s["properties"].is_object())
            for (const auto& [name, schema] : s["properties"].items()) listed.insert(name);
          if (allowed_) {
            std::set<std::string> both;
            std::set_intersection(allowed_->begin(), allowed_->end(), listed.begin(), listed.end(),
                                  std::inserter(both, both.end()));
            listed = std::move(both);
          }
          allowed_ = std::move(listed);
        }
      } else if (key == "items" && value.is_object()) {
        items_.push_back(value);
        array_branches_.insert(b.path);
      } else if (key == "items" || key == "prefixItems" || key == "additionalItems") {
        // Positions (a tuple, or items false): they mean nothing in another schema's terms.
        if (tuple_ && *tuple_ != b.path)
          fail(at, "'" + key + "' beside another schema's array keywords in one allOf cannot be merged");
        tuple_ = b.path;
        array_branches_.insert(b.path);
        out_[key] = value;
      } else if (key == "minimum" || key == "minLength" || key == "minItems" || key == "minProperties") {
        bound(key, value, at, true);
      } else if (key == "maximum" || key == "maxLength" || key == "maxItems" || key == "maxProperties") {
        bound(key, value, at, false);
      } else if (key == "exclusiveMinimum" || key == "exclusiveMaximum") {
        if (value.is_boolean()) fail(at, "draft 4's boolean '" + key + "' inside allOf cannot be merged");
        bound(key, value, at, key == "exclusiveMinimum");
      } else if (key == "pattern" || key == "format" || key == "propertyNames" || key == "multipleOf") {
        agree(key, value, at, "two different '" + key + "'s in one allOf cannot be enforced together");
      } else if (key == "enum" || key == "const") {
        values(key == "const" ? json::array({value}) : value, at);
      } else if (key == "$ref") {  // a chain ends at no reference: not a string, or a cycle
        fail(at, value.is_string() ? "a chain of $refs that never ends in a schema" : "'$ref' must be a string");
      } else if (key == "uniqueItems") {
        if (!out_.contains(key) || value == json(true)) out_[key] = value;
      } else {  // anyOf / oneOf: distributed before the merge
        fail(at, "'" + key + "' in two schemas of one allOf cannot be merged");
      }
    }
  }

  json result() {
    if (tuple_ && array_branches_.size() > 1)
      fail(*tuple_, "a tuple or 'items: false' beside another schema's 'items' in one allOf cannot be merged");
    if (types_) out_["type"] = types_->size() == 1 ? json((*types_)[0]) : json(*types_);
    if (!names_.empty()) {
      json properties = json::object();
      for (const std::string& name : names_) {
        if (allowed_ && !allowed_->count(name)) continue;
        const std::vector<json>& schemas = properties_[name];
        properties[name] = schemas.size() == 1 ? schemas[0] : json{{"allOf", schemas}};
      }
      out_["properties"] = std::move(properties);
    }
    if (!required_.empty()) {
      for (const json& name : required_)
        if (allowed_ && name.is_string() && !allowed_->count(name.get<std::string>()))
          fail(path_, "'" + name.get<std::string>() +
                          "' is required, but a schema of the allOf with additionalProperties false does not list it");
      out_["required"] = required_;
    }
    if (allowed_) out_["additionalProperties"] = false;
    if (!items_.empty()) out_["items"] = items_.size() == 1 ? items_[0] : json{{"allOf", items_}};
    if (values_) out_["enum"] = *values_;
    return std::move(out_);
  }

 private:
  // A keyword every schema that gives it must give alike (`why` where two differ).
  void agree(const std::string& key, const json& value, const std::string& at, const std::string& why) {
    if (out_.contains(key) && out_[key] != value) fail(at, why);
    out_[key] = value;
  }
  // The tighter bound: the larger lower one, the smaller upper one.
  void bound(const std::string& key, const json& value, const std::string& at, bool lower) {
    if (!value.is_number()) fail(at, "'" + key + "' must be a number");
    if (!out_.contains(key)) {
      out_[key] = value;
      return;
    }
    const double old = out_[key].get<double>(), now = value.get<double>();
    if (lower ? now > old : now < old) out_[key] = value;
  }
  // The values every enum / const lists.
  void values(const json& list, const std::string& at) {
    if (!list.is_array() || list.empty()) fail(at, "'enum' must be a non-empty list");
    if (list.size() > kMaxValues)
      fail(at, concat("'enum' has ", list.size(), " values; at most ", kMaxValues, " are supported"));
    if (!values_) {
      values_ = list;
      return;
    }
    std::unordered_set<std::string> listed;
    for (const json& w : list) listed.insert(canonical_text(w));
    json kept = json::array();
    for (const json& v : *values_)
      if (listed.count(canonical_text(v))) kept.push_back(v);
    if (kept.empty()) throw Unsatisfiable(at, "allOf's enum / const values have none in common");
    values_ = std::move(kept);
  }

  std::string path_;
  json out_ = json::object();
  std::optional<std::vector<std::string>> types_;
  std::vector<std::string> names_;  // properties in the order first given
  std::map<std::string, std::vector<json>> properties_;
  json required_ = json::array();
  std::unordered_set<std::string> required_names_;  // required_'s, as canonical texts
  std::optional<std::set<std::string>> allowed_;  // the names additionalProperties false leaves
  std::vector<json> items_;
  std::optional<std::string> tuple_;    // the schema that gave prefixItems, additionalItems or a non-schema items
  std::set<std::string> array_branches_;  // the schemas that gave items of any kind
  std::optional<json> values_;
};

json merge(const json& s, const std::string& path, const Dereference& dereference, Budget& budget) {
  if (--budget.merges < 0)
    fail(path, concat("allOf whose anyOf / oneOf make more than ", kMaxMerged, " schemas to merge"));
  std::vector<Branch> branches;
  size_t seen = 0;
  collect(s, path, dereference, 0, branches, seen);
  // A branch with anyOf or oneOf: the allOf of the others with each of its alternatives. Another
  // branch's choice is distributed in turn (within the budget): the products of two choices of
  // one kind are one choice of that kind (exactly one of A, B and of C, D is exactly one of their
  // four products), an anyOf goes outside a oneOf (whose branches then keep what tells them apart).
  const Branch* choice = nullptr;
  std::string key;
  for (const char* k : {"anyOf", "oneOf"})
    for (const Branch& b : branches)
      if (!choice && b.schema->contains(k)) choice = &b, key = k;
  if (!choice) {
    Merge merge(path);
    for (const Branch& b : branches) spend(budget, *b.schema, b.path), merge.add(b);
    return merge.result();
  }
  const json& alternatives = (*choice->schema)[key];
  const std::string at = child(choice->path, key);
  if (!alternatives.is_array() || alternatives.empty()) fail(at, "'" + key + "' must be a non-empty list of schemas");
  // Every schema's keywords but the choice itself; an alternative goes right after its schema's,
  // so that properties keep the order the schemas give them in.
  json rest = json::array();
  size_t place = 0;
  for (const Branch& b : branches) {
    json keywords = *b.schema;
    keywords.erase("allOf");
    if (&b == choice) keywords.erase(key), keywords.erase("discriminator"), place = rest.size() + 1;
    rest.push_back(std::move(keywords));
  }
  json out = json::object();
  out[key] = json::array();
  std::optional<Unsatisfiable> none;  // the first product no document satisfies
  for (size_t i = 0; i < alternatives.size(); ++i) {
    spend(budget, rest, at);
    json all = rest;
    all.insert(all.begin() + static_cast<std::ptrdiff_t>(place), alternatives[i]);
    json merged;
    try {
      merged = merge(json{{"allOf", std::move(all)}}, child(at, std::to_string(i)), dereference, budget);
    } catch (const Unsatisfiable& e) {
      if (!none) none = e;
      continue;
    }
    if (merged.size() == 1 && merged.contains(key))
      for (json& product : merged[key]) out[key].push_back(std::move(product));
    else
      out[key].push_back(std::move(merged));
  }
  if (out[key].empty()) throw *none;  // every product: refused as the first
  if (choice->schema->contains("discriminator")) out["discriminator"] = (*choice->schema)["discriminator"];
  return out;
}

}  // namespace

nlohmann::ordered_json merge_all_of(const json& s, const std::string& path, const Dereference& dereference) {
  Budget budget;
  return merge(s, path, dereference, budget);
}

}  // namespace difftx::grammar
