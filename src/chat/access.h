// Attribute, item and slice access as jinja2's sandbox does it: `x.name` prefers a Python
// attribute (str and dict methods) and falls back to the key; `x[key]` prefers the key; a
// missing key or index is undefined; anything of an undefined value is an error.
#pragma once
#include <optional>
#include <string>

#include "chat/value.h"

namespace difftx::chat {

Value get_attribute(const Value& object, const std::string& name);
Value get_item(const Value& object, const Value& key);
// object[start:stop:step]; an undefined or None part is omitted.
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step);

// An attribute path "a.b" or "0" followed item by item as jinja2's make_attrgetter does (a part
// of digits is an index); fallback: what stands in for an undefined step (the filters' default=).
Value attribute_path(const Value& v, const std::string& path, const Value* fallback = nullptr);
// A filter's `attribute` argument as a path (a number becomes its digits).
std::string attribute_name(const CallArgs& args, size_t position);

// A call's argument by position or keyword (nullptr when not given).
const Value* argument(const CallArgs& args, size_t position, const char* name);
// The argument as a string / an integer, or the fallback when not given (a wrong type is an error).
std::optional<std::string> string_argument(const CallArgs& args, size_t position, const char* name);
int64_t int_argument(const CallArgs& args, size_t position, const char* name, int64_t fallback);
bool bool_argument(const CallArgs& args, size_t position, const char* name, bool fallback);
// An undefined value fails with its description, as using it in jinja2 does.
[[noreturn]] void fail_undefined(const Value& undefined);

}  // namespace difftx::chat
