// jinja2's tests: `x is defined`, `x is string`, `n is divisibleby 3`, ...
#include <map>

#include "chat/access.h"
#include "chat/filters.h"
#include "chat/operators.h"
#include "chat/template_error.h"

namespace difftx::chat {
namespace {

using K = Value::Kind;
using Test = bool (*)(const Value&, const CallArgs&);

const Value& other(const CallArgs& a, const char* test) {
  const Value* v = argument(a, 0, "other");
  if (!v) template_fail("test '", test, "' needs an argument");
  return *v;
}

// jinja2's even/odd/divisibleby: value % n compared with 0 or 1, Python's modulo.
bool remainder_is(const Value& v, const Value& n, int64_t want) {
  return equal(binary_op("%", v, n), Value::from(want));
}

const std::map<std::string, Test>& tests() {
  static const std::map<std::string, Test> table = {
      {"defined", [](const Value& v, const CallArgs&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, const CallArgs&) { return v.is_undefined(); }},
      {"none", [](const Value& v, const CallArgs&) { return v.kind == K::none; }},
      {"string", [](const Value& v, const CallArgs&) { return v.is_string(); }},
      {"number", [](const Value& v, const CallArgs&) { return v.is_number(); }},
      {"integer", [](const Value& v, const CallArgs&) { return v.kind == K::integer; }},
      {"float", [](const Value& v, const CallArgs&) { return v.kind == K::number; }},
      {"boolean", [](const Value& v, const CallArgs&) { return v.kind == K::boolean; }},
      {"true", [](const Value& v, const CallArgs&) { return v.kind == K::boolean && v.boolean; }},
      {"false", [](const Value& v, const CallArgs&) { return v.kind == K::boolean && !v.boolean; }},
      {"mapping", [](const Value& v, const CallArgs&) { return v.is_dict() && !v.is_namespace; }},
      {"iterable", [](const Value& v, const CallArgs&) {
         return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace);
       }},
      {"sequence", [](const Value& v, const CallArgs&) {
         return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace);
       }},
      // functions, loop objects, and undefined (calling it is what fails)
      {"callable", [](const Value& v, const CallArgs&) { return v.function != nullptr || v.is_undefined(); }},
      {"even", [](const Value& v, const CallArgs&) { return remainder_is(v, Value::from(int64_t{2}), 0); }},
      {"odd", [](const Value& v, const CallArgs&) { return remainder_is(v, Value::from(int64_t{2}), 1); }},
      {"divisibleby", [](const Value& v, const CallArgs& a) { return remainder_is(v, other(a, "divisibleby"), 0); }},
      {"lower", [](const Value& v, const CallArgs&) { return v.is_string() && str(apply_filter("lower", v, {})) == v.text; }},
      {"upper", [](const Value& v, const CallArgs&) { return v.is_string() && str(apply_filter("upper", v, {})) == v.text; }},
      {"eq", [](const Value& v, const CallArgs& a) { return equal(v, other(a, "eq")); }},
      {"ne", [](const Value& v, const CallArgs& a) { return !equal(v, other(a, "ne")); }},
      {"lt", [](const Value& v, const CallArgs& a) { return less(v, other(a, "lt")); }},
      {"gt", [](const Value& v, const CallArgs& a) { return less(other(a, "gt"), v); }},
      {"le", [](const Value& v, const CallArgs& a) { return !less(other(a, "le"), v); }},
      {"ge", [](const Value& v, const CallArgs& a) { return !less(v, other(a, "ge")); }},
      {"in", [](const Value& v, const CallArgs& a) { return contains(other(a, "in"), v); }},
      {"filter", [](const Value& v, const CallArgs&) { return v.is_string() && has_filter(v.text); }},
      {"test", [](const Value& v, const CallArgs&) { return v.is_string() && has_test(v.text); }},
      {"sameas", [](const Value& v, const CallArgs& a) {
         const Value& o = other(a, "sameas");
         if (v.kind != o.kind) return false;
         if (v.is_list()) return v.list == o.list;
         if (v.is_dict()) return v.dict == o.dict;
         return v.kind == K::none || v.kind == K::boolean ? equal(v, o) : false;
       }},
  };
  return table;
}

const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> table = {
      {"equalto", "eq"}, {"==", "eq"}, {"!=", "ne"}, {"<", "lt"}, {">", "gt"}, {"<=", "le"}, {">=", "ge"},
      {"lessthan", "lt"}, {"greaterthan", "gt"}};
  return table;
}

}  // namespace

bool has_test(const std::string& name) { return tests().count(name) || aliases().count(name); }

bool apply_test(const std::string& name, const Value& input, const CallArgs& args) {
  const auto alias = aliases().find(name);
  const auto it = tests().find(alias == aliases().end() ? name : alias->second);
  if (it == tests().end()) template_fail("no test named '", name, "'");
  return it->second(input, args);
}

}  // namespace difftx::chat
