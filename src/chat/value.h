// The values a chat template computes with, as Python and jinja2 see them: undefined, None,
// bool, int, float, str (UTF-8), list, dict (insertion order) and callables. Lists and dicts
// are shared (templates cannot mutate them; only namespace() objects change, in place).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace difftx::chat {

// What one render may build, whatever its template does (jinja2 has no such limits; a real chat
// template stays far below them): strings and the output up to kMaxTextBytes, lists up to
// kMaxListItems, and kMaxSteps loop iterations and macro calls in all. Past one, a TemplateError.
constexpr size_t kMaxTextBytes = size_t{64} << 20;
constexpr size_t kMaxListItems = size_t{1} << 20;
constexpr int64_t kMaxSteps = 10'000'000;

struct Value;
using List = std::vector<Value>;

// Python's int, within 128 bits: every JSON integer (int64 and uint64 alike) is one, exact;
// arithmetic beyond 128 bits is an overflow error.
using Int = __int128;
inline constexpr Int kIntMax = static_cast<Int>(~static_cast<unsigned __int128>(0) >> 1);
inline constexpr Int kIntMin = -kIntMax - 1;

// A dict keeps its keys in insertion order, as Python's does.
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value value);
};

// Arguments of a call: positional, then keyword.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};
using Function = std::function<Value(const CallArgs&)>;

struct Value {
  enum class Kind { undefined, none, boolean, integer, number, string, list, dict, function };
  Kind kind = Kind::undefined;
  bool boolean = false;
  Int integer = 0;
  double number = 0;
  std::string text{};  // a string's bytes; an undefined value's description ("'x' is undefined")
  std::shared_ptr<List> list{};
  std::shared_ptr<Dict> dict{};
  std::shared_ptr<Function> function{};
  bool is_namespace = false;  // a dict made by namespace(): attribute assignment allowed
  bool is_tuple = false;      // a list that Python would hold as a tuple (prints as (a, b))
  bool is_group = false;      // a tuple from groupby: (grouper, list), also .grouper and .list

  static Value undefined(std::string description = "");
  static Value none();
  static Value from(bool b);
  static Value from(int64_t i);
  static Value from(Int i);
  static Value from(double d);
  static Value from(std::string s);
  static Value from(List items);
  static Value tuple(List items);
  static Value from(Dict items);
  static Value from(Function f);

  bool is_undefined() const { return kind == Kind::undefined; }
  bool is_string() const { return kind == Kind::string; }
  bool is_number() const { return kind == Kind::integer || kind == Kind::number || kind == Kind::boolean; }
  // An int or a bool (Python's bools are ints), and its value as an int.
  bool is_integral() const { return kind == Kind::integer || kind == Kind::boolean; }
  Int integral() const { return kind == Kind::boolean ? Int{boolean} : integer; }
  bool is_list() const { return kind == Kind::list; }
  bool is_dict() const { return kind == Kind::dict; }
};

// Python semantics.
bool truthy(const Value& v);
std::string str(const Value& v);   // str(v); undefined is ''
std::string repr(const Value& v);  // repr(v), as inside a printed list
std::string ascii(const Value& v);  // ascii(v): repr(v) with the code points past ASCII escaped
std::string type_name(const Value& v);  // Python's type name: 'str', 'dict', ...
bool equal(const Value& a, const Value& b);
// a < b for numbers, strings and lists; other pairs are a TemplateError.
bool less(const Value& a, const Value& b);
std::string python_float(double d);  // repr(float)
std::string int_text(Int i);         // str(int): its decimal digits
// Python's int(text, base) (base 2 to 36, or 0: the prefix 0x/0o/0b or none decides): an optional sign,
// digits with single underscores between them; nullopt for anything else or beyond 128 bits.
std::optional<Int> parse_int(const std::string& text, int base = 10);
// Python's float(text): decimal digits (underscores between them) with an optional point and exponent,
// inf, infinity or nan, signed or not, correctly rounded (beyond the range: inf or 0); nullopt otherwise.
std::optional<double> parse_float(const std::string& text);
double as_double(const Value& v);    // int, float or bool as a double
// int(d): Python's errors for nan and infinity; beyond 128 bits an overflow error.
Int int_of_float(double d);

// Unicode code points of a UTF-8 string (invalid bytes are taken one by one), and the number of one
// of them.
std::vector<std::string> code_points(const std::string& s);
uint32_t code_point_value(const std::string& c);
// The items a for loop visits: a list's items, a dict's keys, a string's characters; undefined
// is empty; anything else is a TemplateError.
List iterate(const Value& v);

// JSON in and out (json.dumps as transformers' tojson: ensure_ascii off, optional indent).
template <typename Json>
Value from_json(const Json& j);
struct JsonStyle {
  int indent = -1;  // -1: one line
  bool sort_keys = false;
  bool ensure_ascii = false;
  std::string item_separator, key_separator;  // empty: Python's defaults for the indent
};
std::string to_json(const Value& v, const JsonStyle& style = {});

}  // namespace difftx::chat
