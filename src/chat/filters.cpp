// jinja2's filters (and transformers' tojson), each as jinja2 3.1 defines it.
#include "chat/filters.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <utility>

#include "chat/access.h"
#include "chat/format_pieces.h"
#include "chat/operators.h"
#include "chat/percent_format.h"
#include "chat/strings.h"
#include "chat/template_error.h"
#include "chat/text_filters.h"

namespace difftx::chat {
namespace {

using K = Value::Kind;
using Filter = Value (*)(const Value&, const CallArgs&);

int64_t length(const Value& v) {
  switch (v.kind) {
    case K::undefined: return 0;
    case K::string: return static_cast<int64_t>(py_len(v.text));
    case K::list: return static_cast<int64_t>(v.list->size());
    case K::dict: return static_cast<int64_t>(v.dict->items.size());
    default: template_fail("object of type '", type_name(v), "' has no len()");
  }
}

// The arguments after the first `skip` positional ones (select's test arguments).
CallArgs rest(const CallArgs& a, size_t skip) {
  CallArgs out;
  for (size_t i = skip; i < a.positional.size(); ++i) out.positional.push_back(a.positional[i]);
  return out;
}

Value select(const Value& seq, const CallArgs& a, bool by_attribute, bool keep) {
  List out;
  const size_t test_at = by_attribute ? 1 : 0;
  const std::string attribute = by_attribute ? attribute_name(a, 0) : "";
  for (const Value& item : iterate(seq)) {
    const Value subject = by_attribute ? attribute_path(item, attribute) : item;
    bool ok;
    if (a.positional.size() > test_at) {
      const Value& test = a.positional[test_at];
      ok = apply_test(str(test), subject, rest(a, test_at + 1));
    } else {
      ok = truthy(subject);
    }
    if (ok == keep) out.push_back(item);
  }
  return Value::from(std::move(out));
}

// sort/unique compare strings case-insensitively unless told otherwise.
Value sort_key(const Value& v, bool case_sensitive) {
  return v.is_string() && !case_sensitive ? Value::from(py_lower(v.text)) : v;
}

Value round_filter(const Value& v, const CallArgs& a) {
  const int64_t precision = int_argument(a, 0, "precision", 0);
  const auto method = string_argument(a, 1, "method").value_or("common");
  if (!v.is_number()) template_fail("round needs a number, not ", type_name(v));
  const double x = as_double(v), scale = std::pow(10.0, static_cast<double>(precision));
  double r;
  if (method == "common") r = std::nearbyint(x * scale) / scale;  // Python rounds halves to even
  else if (method == "ceil") r = std::ceil(x * scale) / scale;
  else if (method == "floor") r = std::floor(x * scale) / scale;
  else template_fail("method must be common, ceil or floor");
  return Value::from(r);
}

Value indent(const Value& v, const CallArgs& a) {
  const Value* w = argument(a, 0, "width");
  std::string pad;
  if (w && w->is_string()) {
    pad = w->text;
  } else {  // Python's " " * width: nothing for a negative one
    const int64_t width = int_argument(a, 0, "width", 4);
    if (width > kMaxFormatField) template_fail("indent width too big (difftx stops at ", kMaxFormatField, ")");
    pad.assign(static_cast<size_t>(std::max<int64_t>(width, 0)), ' ');
  }
  const bool first = bool_argument(a, 1, "first", false), blank = bool_argument(a, 2, "blank", false);
  if (!v.is_string()) template_fail("indent needs a string, not ", type_name(v));
  std::vector<std::string> lines = py_splitlines(str(v) + "\n");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 0) {
      out = lines[0];
      continue;
    }
    out += '\n';
    if (blank || !lines[i].empty()) out += pad;
    out += lines[i];
  }
  return Value::from(first ? pad + out : out);
}

Value tojson(const Value& v, const CallArgs& a) {
  JsonStyle style;
  const Value* indent_v = argument(a, 0, "indent");
  if (indent_v && indent_v->kind != K::none) style.indent = static_cast<int>(int_argument(a, 0, "indent", 0));
  style.ensure_ascii = bool_argument(a, 99, "ensure_ascii", false);
  style.sort_keys = bool_argument(a, 99, "sort_keys", false);
  if (const Value* sep = argument(a, 99, "separators"); sep && sep->is_list() && sep->list->size() == 2) {
    style.item_separator = str((*sep->list)[0]);
    style.key_separator = str((*sep->list)[1]);
  }
  return Value::from(to_json(v, style));
}

// jinja2's int filter: int(value, base) for a string, int(value) for a number, else int(float(value)),
// else the default.
Value to_int(const Value& v, const CallArgs& a) {
  const Value* fallback = argument(a, 0, "default");
  const Value dflt = fallback ? *fallback : Value::from(int64_t{0});
  if (v.is_integral()) return Value::from(v.integral());
  // int(float('nan')) is a ValueError, which the filter turns into its default; inf fails
  auto of_float = [&](double d) { return std::isnan(d) ? dflt : Value::from(int_of_float(d)); };
  if (v.kind == K::number) return of_float(v.number);
  if (v.is_string()) {
    const std::string t = py_strip(v.text, std::nullopt, true, true);
    const int64_t base = int_argument(a, 1, "base", 10);
    if (const std::optional<Int> i = parse_int(t, base >= 0 && base <= 36 ? static_cast<int>(base) : 1))
      return Value::from(*i);
    if (const std::optional<double> d = parse_float(t)) return of_float(*d);
  }
  return dflt;
}

Value to_float(const Value& v, const CallArgs& a) {
  const Value* fallback = argument(a, 0, "default");
  const Value dflt = fallback ? *fallback : Value::from(0.0);
  if (v.is_number()) return Value::from(as_double(v));
  if (v.is_string())
    if (const std::optional<double> d = parse_float(py_strip(v.text, std::nullopt, true, true))) return Value::from(*d);
  return dflt;
}

Value join(const Value& v, const CallArgs& a) {
  const std::string sep = string_argument(a, 0, "d").value_or("");
  const Value* attribute = argument(a, 1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v)) {
    out += (first ? "" : sep) + str(attribute ? attribute_path(item, str(*attribute)) : item);
    first = false;
  }
  return Value::from(out);
}

Value map_filter(const Value& v, const CallArgs& a) {
  List out;
  const Value* attribute = argument(a, 99, "attribute");
  const Value* fallback = argument(a, 99, "default");
  for (const Value& item : iterate(v)) {
    if (attribute) {
      out.push_back(attribute_path(item, str(*attribute), fallback));
    } else {
      if (a.positional.empty()) template_fail("map needs a filter name or attribute=");
      const std::string filter = str(a.positional[0]);
      if (!has_filter(filter)) template_fail("no filter named '", filter, "'");
      out.push_back(apply_filter(filter, item, rest(a, 1)));
    }
  }
  return Value::from(std::move(out));
}

Value sort_filter(const Value& v, const CallArgs& a) {
  const bool reverse = bool_argument(a, 0, "reverse", false);
  const bool case_sensitive = bool_argument(a, 1, "case_sensitive", false);
  const Value* attribute = argument(a, 2, "attribute");
  List items = iterate(v);
  auto key = [&](const Value& x) { return sort_key(attribute ? attribute_path(x, str(*attribute)) : x, case_sensitive); };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return reverse ? less(key(y), key(x)) : less(key(x), key(y));
  });
  return Value::from(std::move(items));
}

Value dictsort(const Value& v, const CallArgs& a) {
  if (!v.is_dict()) template_fail("dictsort needs a dict, not ", type_name(v));
  const bool case_sensitive = bool_argument(a, 0, "case_sensitive", false);
  const std::string by = string_argument(a, 1, "by").value_or("key");
  const bool reverse = bool_argument(a, 2, "reverse", false);
  List items;
  for (const auto& [k, x] : v.dict->items) items.push_back(Value::tuple(List{Value::from(k), x}));
  const size_t at = by == "value" ? 1 : 0;
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    const Value kx = sort_key((*x.list)[at], case_sensitive), ky = sort_key((*y.list)[at], case_sensitive);
    return reverse ? less(ky, kx) : less(kx, ky);
  });
  return Value::from(std::move(items));
}

Value unique(const Value& v, const CallArgs& a) {
  const bool case_sensitive = bool_argument(a, 0, "case_sensitive", false);
  const Value* attribute = argument(a, 1, "attribute");
  List out, seen;
  for (const Value& item : iterate(v)) {
    const Value key = sort_key(attribute ? attribute_path(item, str(*attribute)) : item, case_sensitive);
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, key); })) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::from(std::move(out));
}

Value min_max(const Value& v, const CallArgs& a, bool want_max) {
  const bool case_sensitive = bool_argument(a, 0, "case_sensitive", false);
  const Value* attribute = argument(a, 1, "attribute");
  const List items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  auto key = [&](const Value& x) { return sort_key(attribute ? attribute_path(x, str(*attribute)) : x, case_sensitive); };
  for (size_t i = 1; i < items.size(); ++i)
    if (want_max ? less(key(items[best]), key(items[i])) : less(key(items[i]), key(items[best]))) best = i;
  return items[best];
}

Value sum(const Value& v, const CallArgs& a) {
  const Value* attribute = argument(a, 0, "attribute");
  const Value* start = argument(a, 1, "start");
  Value total = start ? *start : Value::from(int64_t{0});
  for (const Value& item : iterate(v)) total = binary_op("+", total, attribute ? attribute_path(item, str(*attribute)) : item);
  return total;
}

// groupby(attribute, default=None, case_sensitive=False): the items sorted by the attribute and
// grouped where it is equal, as (grouper, list) tuples; without case_sensitive a group's grouper
// is its first item's attribute, in that item's case.
Value groupby(const Value& v, const CallArgs& a) {
  const std::string attribute = attribute_name(a, 0);
  const Value* fallback = argument(a, 1, "default");
  const bool case_sensitive = bool_argument(a, 2, "case_sensitive", false);
  std::vector<std::pair<Value, Value>> keyed;  // (key, item)
  for (const Value& item : iterate(v)) keyed.emplace_back(sort_key(attribute_path(item, attribute, fallback), case_sensitive), item);
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return less(x.first, y.first); });
  List out;
  for (size_t i = 0; i < keyed.size();) {
    List members;
    size_t j = i;
    for (; j < keyed.size() && equal(keyed[j].first, keyed[i].first); ++j) members.push_back(keyed[j].second);
    Value group = Value::tuple(List{attribute_path(keyed[i].second, attribute, fallback), Value::from(std::move(members))});
    group.is_group = true;
    out.push_back(std::move(group));
    i = j;
  }
  return Value::from(std::move(out));
}

// A count argument of batch or slice: required, and within what a list may hold.
int64_t count_argument(const CallArgs& a, const char* name) {
  if (!argument(a, 0, name)) template_fail("missing the argument '", name, "'");
  const int64_t n = int_argument(a, 0, name, 0);
  if (n > static_cast<int64_t>(kMaxListItems)) template_fail(name, " ", n, " is too big (difftx stops at ", kMaxListItems, " items)");
  return n;
}
// fill_with: None and absent alike add nothing.
const Value* fill_argument(const CallArgs& a) {
  const Value* fill = argument(a, 1, "fill_with");
  return fill && fill->kind != K::none ? fill : nullptr;
}

// batch(linecount, fill_with=None): lists of linecount items, the last one filled up.
Value batch(const Value& v, const CallArgs& a) {
  const int64_t n = count_argument(a, "linecount");
  const Value* fill = fill_argument(a);
  List out, row;
  for (const Value& item : iterate(v)) {
    if (static_cast<int64_t>(row.size()) == n) out.push_back(Value::from(std::exchange(row, {})));
    row.push_back(item);
  }
  if (row.empty()) return Value::from(std::move(out));
  while (fill && static_cast<int64_t>(row.size()) < n) row.push_back(*fill);
  out.push_back(Value::from(std::move(row)));
  return Value::from(std::move(out));
}

// slice(slices, fill_with=None): the items in `slices` lists of near-equal length, the longer ones
// first; fill_with tops up the shorter ones.
Value slice_filter(const Value& v, const CallArgs& a) {
  const int64_t slices = count_argument(a, "slices");
  const Value* fill = fill_argument(a);
  const List seq = iterate(v);
  if (slices == 0) template_fail("integer division or modulo by zero");
  const int64_t n = static_cast<int64_t>(seq.size());
  const int64_t per = n / slices - (n % slices != 0 && (n < 0) != (slices < 0));  // Python's // and %
  const int64_t extra = n - per * slices;
  List out;
  for (int64_t k = 0, offset = 0; k < slices; ++k) {
    const int64_t start = offset + k * per;
    if (k < extra) ++offset;
    const int64_t end = offset + (k + 1) * per;
    List part(seq.begin() + start, seq.begin() + std::max(start, end));
    if (fill && k >= extra) part.push_back(*fill);
    out.push_back(Value::from(std::move(part)));
  }
  return Value::from(std::move(out));
}

const std::map<std::string, Filter>& filters() {
  static const std::map<std::string, Filter> table = {
      {"length", [](const Value& v, const CallArgs&) { return Value::from(length(v)); }},
      {"trim", [](const Value& v, const CallArgs& a) {
         return Value::from(py_strip(str(v), string_argument(a, 0, "chars"), true, true));
       }},
      {"upper", [](const Value& v, const CallArgs&) { return Value::from(py_upper(str(v))); }},
      {"lower", [](const Value& v, const CallArgs&) { return Value::from(py_lower(str(v))); }},
      {"title", [](const Value& v, const CallArgs&) { return Value::from(jinja_title(str(v))); }},
      {"capitalize", [](const Value& v, const CallArgs&) { return Value::from(py_capitalize(str(v))); }},
      {"replace", [](const Value& v, const CallArgs& a) {
         const Value* old = argument(a, 0, "old");
         const Value* with = argument(a, 1, "new");
         if (!old || !with) template_fail("replace needs old and new");
         return Value::from(py_replace(str(v), str(*old), str(*with), int_argument(a, 2, "count", -1)));
       }},
      {"default", [](const Value& v, const CallArgs& a) {
         const Value* fallback = argument(a, 0, "default_value");
         const bool boolean = bool_argument(a, 1, "boolean", false);
         if (v.is_undefined() || (boolean && !truthy(v))) return fallback ? *fallback : Value::from(std::string());
         return v;
       }},
      {"join", join},
      {"first", [](const Value& v, const CallArgs&) {
         const List items = iterate(v);
         return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
       }},
      {"last", [](const Value& v, const CallArgs&) {
         const List items = iterate(v);
         return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
       }},
      {"list", [](const Value& v, const CallArgs&) { return Value::from(iterate(v)); }},
      {"tojson", tojson},
      {"string", [](const Value& v, const CallArgs&) { return Value::from(str(v)); }},
      {"safe", [](const Value& v, const CallArgs&) { return Value::from(str(v)); }},
      {"int", to_int},
      {"float", to_float},
      {"abs", [](const Value& v, const CallArgs&) {
         if (v.kind == K::number) return Value::from(std::fabs(v.number));
         if (!v.is_number()) template_fail("bad operand type for abs(): '", type_name(v), "'");
         if (v.kind == K::boolean) return Value::from(int64_t{v.boolean});
         return v.integer < 0 ? negate(v) : v;
       }},
      {"round", round_filter},
      {"items", [](const Value& v, const CallArgs&) {
         if (v.is_undefined()) return Value::from(List{});
         if (!v.is_dict()) template_fail("Can only get item pairs from a mapping.");
         List out;
         for (const auto& [k, x] : v.dict->items) out.push_back(Value::tuple(List{Value::from(k), x}));
         return Value::from(std::move(out));
       }},
      {"map", map_filter},
      {"select", [](const Value& v, const CallArgs& a) { return select(v, a, false, true); }},
      {"reject", [](const Value& v, const CallArgs& a) { return select(v, a, false, false); }},
      {"selectattr", [](const Value& v, const CallArgs& a) { return select(v, a, true, true); }},
      {"rejectattr", [](const Value& v, const CallArgs& a) { return select(v, a, true, false); }},
      {"unique", unique},
      {"reverse", [](const Value& v, const CallArgs&) {
         if (v.is_string()) {
           std::vector<std::string> cps = code_points(v.text);
           std::string out;
           for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
           return Value::from(out);
         }
         List items = iterate(v);
         std::reverse(items.begin(), items.end());
         return Value::from(std::move(items));
       }},
      {"sort", sort_filter},
      {"dictsort", dictsort},
      {"indent", indent},
      {"wordcount", [](const Value& v, const CallArgs&) {
         int64_t n = 0;
         bool in_word = false;
         for (const auto& c : code_points(str(v))) {
           const bool word = c.size() > 1 || std::isalnum(static_cast<unsigned char>(c[0])) || c[0] == '_';
           n += word && !in_word;
           in_word = word;
         }
         return Value::from(n);
       }},
      {"min", [](const Value& v, const CallArgs& a) { return min_max(v, a, false); }},
      {"max", [](const Value& v, const CallArgs& a) { return min_max(v, a, true); }},
      {"sum", sum},
      {"attr", [](const Value& v, const CallArgs& a) { return get_attribute(v, string_argument(a, 0, "name").value_or("")); }},
      {"format", [](const Value& v, const CallArgs& a) {
         if (!a.positional.empty() && !a.named.empty())
           template_fail("can't handle positional and keyword arguments at the same time");
         if (a.named.empty()) return Value::from(percent_format(str(v), Value::tuple(a.positional)));
         Dict mapping;
         for (const auto& [k, x] : a.named) mapping.set(k, x);
         return Value::from(percent_format(str(v), Value::from(std::move(mapping))));
       }},
      {"groupby", groupby},
      {"batch", batch},
      {"slice", slice_filter},
      {"truncate", truncate},
      {"filesizeformat", filesizeformat},
      {"urlencode", urlencode},
      {"center", [](const Value& v, const CallArgs& a) {
         const std::string s = str(v);
         const int64_t width = int_argument(a, 0, "width", 80), n = static_cast<int64_t>(py_len(s));
         if (width <= n) return Value::from(s);
         const int64_t left = (width - n) / 2 + ((width - n) % 2 & width % 2);
         return Value::from(std::string(static_cast<size_t>(left), ' ') + s +
                            std::string(static_cast<size_t>(width - n - left), ' '));
       }},
  };
  return table;
}

}  // namespace

bool has_filter(const std::string& name) { return name == "d" || name == "count" || filters().count(name); }

Value apply_filter(const std::string& name, const Value& input, const CallArgs& args) {
  const std::string canonical = name == "d" ? "default" : name == "count" ? "length" : name;
  const auto it = filters().find(canonical);
  if (it == filters().end()) template_fail("no filter named '", name, "'");
  return it->second(input, args);
}

}  // namespace difftx::chat
