#include "chat/operators.h"

#include <cmath>

#include "chat/access.h"
#include "chat/percent_format.h"
#include "chat/template_error.h"

namespace difftx::chat {
namespace {

using K = Value::Kind;


[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (op == "+" && (a.is_string() || a.is_list()))
    template_fail("can only concatenate ", type_name(a), " (not \"", type_name(b), "\") to ", type_name(a));
  template_fail("unsupported operand type(s) for ", op, ": '", type_name(a), "' and '", type_name(b), "'");
}

Value repeat(const Value& seq, Int n) {
  const size_t size = seq.is_string() ? seq.text.size() : seq.list->size();
  const size_t limit = seq.is_string() ? kMaxTextBytes : kMaxListItems;
  if (n > 0 && size > 0 && n > static_cast<Int>(limit / size))
    template_fail("a repetition of ", int_text(n), " copies is too big (difftx stops at 64 MiB or ", kMaxListItems,
                  " items)");
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += seq.text;
    return Value::from(out);
  }
  List out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return seq.is_tuple ? Value::tuple(std::move(out)) : Value::from(std::move(out));
}

Value integer_op(const std::string& op, Int x, Int y) {
  Int r = 0;
  bool overflow = false;
  if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
  else if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
  else if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
  else if (op == "//" || op == "%") {
    if (y == 0) template_fail("integer division or modulo by zero");
    if (x == kIntMin && y == -1) overflow = true;
    else {
      Int q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      r = op == "//" ? q : m;
    }
  } else if (op == "**") {
    if (y < 0) return Value::from(std::pow(static_cast<double>(x), static_cast<double>(y)));
    r = 1;  // by squaring: a square that overflows means the power does (|x| >= 2), as y has bits left
    for (Int base = x, e = y; e > 0 && !overflow; e >>= 1) {
      if (e & 1) overflow = __builtin_mul_overflow(r, base, &r);
      if (e > 1 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
    }
  }
  if (overflow)
    template_fail("integer overflow in ", int_text(x), " ", op, " ", int_text(y), " (difftx's integers are 128-bit)");
  return Value::from(r);
}

Value float_op(const std::string& op, double x, double y) {
  if (op == "+") return Value::from(x + y);
  if (op == "-") return Value::from(x - y);
  if (op == "*") return Value::from(x * y);
  if (op == "**") return Value::from(std::pow(x, y));
  if (y == 0) template_fail("float division by zero");
  if (op == "/") return Value::from(x / y);
  if (op == "//") return Value::from(std::floor(x / y));
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return Value::from(m);
}

}  // namespace

Value binary_op(const std::string& op, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (op == "/") {
      if (as_double(b) == 0) template_fail("division by zero");
      return Value::from(as_double(a) / as_double(b));
    }
    if (a.is_integral() && b.is_integral()) return integer_op(op, a.integral(), b.integral());
    return float_op(op, as_double(a), as_double(b));
  }
  if (op == "+" && a.is_string() && b.is_string()) return Value::from(a.text + b.text);
  if (op == "+" && a.is_list() && b.is_list() && a.is_tuple == b.is_tuple) {
    List out = *a.list;
    out.insert(out.end(), b.list->begin(), b.list->end());
    return a.is_tuple ? Value::tuple(std::move(out)) : Value::from(std::move(out));
  }
  if (op == "*" && (a.is_string() || a.is_list()) && b.is_integral()) return repeat(a, b.integral());
  if (op == "*" && (b.is_string() || b.is_list()) && a.is_integral()) return repeat(b, a.integral());
  if (op == "%" && a.is_string()) return Value::from(percent_format(a.text, b));
  unsupported(op, a, b);
}

Value negate(const Value& v) {
  if (v.kind == K::number) return Value::from(-v.number);
  if (v.is_integral()) return integer_op("-", 0, v.integral());
  if (v.is_undefined()) fail_undefined(v);
  template_fail("bad operand type for unary -: '", type_name(v), "'");
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind) {
    case K::string:
      if (!item.is_string()) template_fail("'in <string>' requires string as left operand, not ", type_name(item));
      return container.text.find(item.text) != std::string::npos;
    case K::list:
      for (const Value& v : *container.list)
        if (equal(v, item)) return true;
      return false;
    case K::dict: return item.is_string() && container.dict->find(item.text) != nullptr;
    case K::undefined: return false;
    default: template_fail("argument of type '", type_name(container), "' is not iterable");
  }
}

}  // namespace difftx::chat
