#include "chat/access.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "chat/str_format.h"
#include "chat/strings.h"
#include "chat/template_error.h"

namespace difftx::chat {

const Value* argument(const CallArgs& args, size_t position, const char* name) {
  if (position < args.positional.size()) return &args.positional[position];
  for (const auto& [k, v] : args.named)
    if (k == name) return &v;
  return nullptr;
}

std::optional<std::string> string_argument(const CallArgs& args, size_t position, const char* name) {
  const Value* v = argument(args, position, name);
  if (!v || v->kind == Value::Kind::none) return std::nullopt;
  if (!v->is_string()) template_fail("argument '", name, "' must be str, not ", type_name(*v));
  return v->text;
}

int64_t int_argument(const CallArgs& args, size_t position, const char* name, int64_t fallback) {
  const Value* v = argument(args, position, name);
  if (!v || v->kind == Value::Kind::none) return fallback;
  if (v->kind == Value::Kind::boolean) return v->boolean;
  if (v->kind != Value::Kind::integer) template_fail("argument '", name, "' must be an integer, not ", type_name(*v));
  if (v->integer < INT64_MIN || v->integer > INT64_MAX)
    template_fail("argument '", name, "' is ", int_text(v->integer), ", beyond 64 bits");
  return static_cast<int64_t>(v->integer);
}

bool bool_argument(const CallArgs& args, size_t position, const char* name, bool fallback) {
  const Value* v = argument(args, position, name);
  return v ? truthy(*v) : fallback;
}

void fail_undefined(const Value& undefined) {
  template_fail(undefined.text.empty() ? std::string("an undefined value was used") : undefined.text);
}

namespace {

Value strings_to_list(const std::vector<std::string>& parts) {
  List out;
  for (const auto& p : parts) out.push_back(Value::from(p));
  return Value::from(std::move(out));
}

bool affix_matches(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& a) {
    if (!a.is_string()) template_fail(prefix ? "startswith" : "endswith", " first arg must be str or a tuple of str");
    const std::string& t = a.text;
    if (t.size() > s.size()) return false;
    return prefix ? s.compare(0, t.size(), t) == 0 : s.compare(s.size() - t.size(), t.size(), t) == 0;
  };
  if (affix.is_list()) {
    for (const auto& a : *affix.list)
      if (one(a)) return true;
    return false;
  }
  return one(affix);
}

std::optional<Value> string_method(const std::string& s, const std::string& name) {
  auto f = [](Function fn) { return std::optional<Value>(Value::from(std::move(fn))); };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const bool left = name != "rstrip", right = name != "lstrip";
    return f([s, left, right](const CallArgs& a) {
      return Value::from(py_strip(s, string_argument(a, 0, "chars"), left, right));
    });
  }
  if (name == "split")
    return f([s](const CallArgs& a) {
      const auto sep = string_argument(a, 0, "sep");
      if (sep && sep->empty()) template_fail("empty separator");
      return strings_to_list(py_split(s, sep, int_argument(a, 1, "maxsplit", -1)));
    });
  if (name == "splitlines") return f([s](const CallArgs&) { return strings_to_list(py_splitlines(s)); });
  if (name == "startswith" || name == "endswith") {
    const bool prefix = name == "startswith";
    return f([s, prefix](const CallArgs& a) {
      const Value* affix = argument(a, 0, "prefix");
      if (!affix) template_fail(prefix ? "startswith" : "endswith", "() takes at least 1 argument");
      return Value::from(affix_matches(s, *affix, prefix));
    });
  }
  if (name == "upper") return f([s](const CallArgs&) { return Value::from(py_upper(s)); });
  if (name == "lower") return f([s](const CallArgs&) { return Value::from(py_lower(s)); });
  if (name == "title") return f([s](const CallArgs&) { return Value::from(jinja_title(s)); });
  if (name == "capitalize") return f([s](const CallArgs&) { return Value::from(py_capitalize(s)); });
  if (name == "replace")
    return f([s](const CallArgs& a) {
      const auto old = string_argument(a, 0, "old"), with = string_argument(a, 1, "new");
      if (!old || !with) template_fail("replace() takes at least 2 arguments");
      return Value::from(py_replace(s, *old, *with, int_argument(a, 2, "count", -1)));
    });
  if (name == "find" || name == "count")
    return f([s, name](const CallArgs& a) {
      const auto sub = string_argument(a, 0, "sub");
      if (!sub) template_fail(name, "() takes at least 1 argument");
      if (name == "find") {
        const size_t at = s.find(*sub);
        return Value::from(at == std::string::npos ? int64_t{-1} : static_cast<int64_t>(py_len(s.substr(0, at))));
      }
      if (sub->empty()) return Value::from(static_cast<int64_t>(py_len(s) + 1));
      int64_t n = 0;
      for (size_t at = s.find(*sub); at != std::string::npos; at = s.find(*sub, at + sub->size())) ++n;
      return Value::from(n);
    });
  if (name == "format")
    return f([s](const CallArgs& a) {
      Dict keywords;
      for (const auto& [k, v] : a.named) keywords.set(k, v);
      return Value::from(str_format(s, a.positional, Value::from(std::move(keywords))));
    });
  if (name == "format_map")
    return f([s](const CallArgs& a) {
      const size_t given = a.positional.size() + a.named.size();
      if (given != 1 || a.positional.empty())
        template_fail("format_map() takes exactly one argument (", given, " given)");
      return Value::from(str_format(s, {}, a.positional[0]));
    });
  if (name == "join")
    return f([s](const CallArgs& a) {
      const Value* items = argument(a, 0, "iterable");
      if (!items) template_fail("join() takes exactly one argument");
      std::string out;
      bool first = true;
      for (const Value& v : iterate(*items)) {
        if (!v.is_string()) template_fail("sequence item: expected str instance, ", type_name(v), " found");
        out += (first ? "" : s) + v.text;
        first = false;
      }
      return Value::from(out);
    });
  return std::nullopt;
}

// The methods that would change a list or dict: the sandbox refuses them when called.
std::optional<Value> unsafe_method(const std::string& name, const char* type,
                                   std::initializer_list<const char*> methods) {
  for (const char* m : methods)
    if (name == m)
      return Value::from(Function([name, type](const CallArgs&) -> Value {
        template_fail("access to attribute '", name, "' of '", type, "' object is unsafe.");
      }));
  return std::nullopt;
}

std::optional<Value> dict_method(const Value& d, const std::string& name) {
  if (name == "get")
    return Value::from(Function([d](const CallArgs& a) {
      const Value* key = argument(a, 0, "key");
      if (!key) template_fail("get expected at least 1 argument, got 0");
      const Value* fallback = argument(a, 1, "default");
      const Value* found = key->is_string() ? d.dict->find(key->text) : nullptr;
      return found ? *found : fallback ? *fallback : Value::none();
    }));
  if (name == "items" || name == "keys" || name == "values")
    return Value::from(Function([d, name](const CallArgs&) {
      List out;
      for (const auto& [k, v] : d.dict->items) {
        if (name == "items") out.push_back(Value::tuple(List{Value::from(k), v}));
        else out.push_back(name == "keys" ? Value::from(k) : v);
      }
      return Value::from(std::move(out));
    }));
  return unsafe_method(name, "dict", {"clear", "pop", "popitem", "setdefault", "update"});
}

std::optional<Value> list_method(const Value& l, const std::string& name) {
  if (name == "count" || name == "index")
    return Value::from(Function([l, name](const CallArgs& a) {
      const Value* x = argument(a, 0, "value");
      if (!x) template_fail(name, "() takes exactly one argument");
      int64_t n = 0;
      for (size_t i = 0; i < l.list->size(); ++i) {
        if (!equal((*l.list)[i], *x)) continue;
        if (name == "index") return Value::from(static_cast<int64_t>(i));
        ++n;
      }
      if (name == "index") template_fail(repr(*x), " is not in list");
      return Value::from(n);
    }));
  if (l.is_tuple) return std::nullopt;
  return unsafe_method(name, "list", {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"});
}

// jinja2's name for an object in its undefined messages: "list object", "None".
std::string object_type_repr(const Value& object) {
  return object.kind == Value::Kind::none ? "None" : type_name(object) + " object";
}

Value missing(const Value& object, const std::string& name) {
  return Value::undefined(concat("'", object_type_repr(object), "' has no attribute '", name, "'"));
}

}  // namespace

Value get_attribute(const Value& object, const std::string& name) {
  switch (object.kind) {
    case Value::Kind::undefined: fail_undefined(object);
    case Value::Kind::string:
      if (auto m = string_method(object.text, name)) return *m;
      break;
    case Value::Kind::dict: {
      if (!object.is_namespace)
        if (auto m = dict_method(object, name)) return *m;
      if (const Value* v = object.dict->find(name)) return *v;
      break;
    }
    case Value::Kind::list:
      if (object.is_group && (name == "grouper" || name == "list")) return (*object.list)[name == "list"];
      if (auto m = list_method(object, name)) return *m;
      break;
    default: break;
  }
  return missing(object, name);
}

Value get_item(const Value& object, const Value& key) {
  switch (object.kind) {
    case Value::Kind::undefined: fail_undefined(object);
    case Value::Kind::dict:
      if (key.is_string()) {
        if (const Value* v = object.dict->find(key.text)) return *v;
        return get_attribute(object, key.text);
      }
      break;
    case Value::Kind::list:
    case Value::Kind::string:
      if (key.is_integral()) {
        const std::vector<std::string> cps = object.is_string() ? code_points(object.text) : std::vector<std::string>{};
        const int64_t n = static_cast<int64_t>(object.is_string() ? cps.size() : object.list->size());
        Int i = key.integral();
        if (i < 0) i += n;
        if (i >= 0 && i < n) return object.is_string() ? Value::from(cps[static_cast<size_t>(i)]) : (*object.list)[static_cast<size_t>(i)];
        return Value::undefined(concat(object_type_repr(object), " has no element ", repr(key)));
      }
      if (key.is_string()) return get_attribute(object, key.text);
      break;
    default: break;
  }
  return Value::undefined(concat(object_type_repr(object), " has no element ", repr(key)));
}

Value attribute_path(const Value& v, const std::string& path, const Value* fallback) {
  Value cur = v;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    const std::optional<Int> index = digits ? parse_int(part) : std::nullopt;  // beyond 128 bits: no such item
    cur = get_item(cur, index ? Value::from(*index) : Value::from(part));
    if (fallback && fallback->kind != Value::Kind::none && cur.is_undefined()) cur = *fallback;  // default=None: none
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

std::string attribute_name(const CallArgs& a, size_t position) {
  const Value* v = argument(a, position, "attribute");
  if (!v) template_fail("an attribute name is required");
  return v->is_string() ? v->text : str(*v);
}

Value get_slice(const Value& object, const Value& start_v, const Value& stop_v, const Value& step_v) {
  if (object.is_undefined()) fail_undefined(object);
  if (!object.is_string() && !object.is_list()) template_fail("'", type_name(object), "' object is not subscriptable");
  auto part = [](const Value& v) -> std::optional<int64_t> {
    if (v.is_undefined() || v.kind == Value::Kind::none) return std::nullopt;
    if (v.kind == Value::Kind::boolean) return v.boolean;
    if (v.kind != Value::Kind::integer) template_fail("slice indices must be integers or None");
    // Any index beyond the sequence clamps alike; 2^62 keeps start + step within int64.
    return static_cast<int64_t>(std::clamp<Int>(v.integer, -(Int{1} << 62), Int{1} << 62));
  };
  const std::vector<std::string> cps = object.is_string() ? code_points(object.text) : std::vector<std::string>{};
  const int64_t n = static_cast<int64_t>(object.is_string() ? cps.size() : object.list->size());
  const int64_t step = part(step_v).value_or(1);
  if (step == 0) template_fail("slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback, int64_t lo, int64_t hi) {
    if (!v) return fallback;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::max(lo, std::min(hi, x));
  };
  int64_t start, stop;
  if (step > 0) {
    start = clamp(part(start_v), 0, 0, n);
    stop = clamp(part(stop_v), n, 0, n);
  } else {
    start = clamp(part(start_v), n - 1, -1, n - 1);
    stop = clamp(part(stop_v), -1, -1, n - 1);
  }
  std::string text;
  List items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (object.is_string()) text += cps[static_cast<size_t>(i)];
    else items.push_back((*object.list)[static_cast<size_t>(i)]);
  }
  if (object.is_string()) return Value::from(text);
  return object.is_tuple ? Value::tuple(std::move(items)) : Value::from(std::move(items));
}

}  // namespace difftx::chat
