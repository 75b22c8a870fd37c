// Python's arithmetic and membership on template values (+ - * / // % ** and `in`).
// Integers are 64-bit: a result beyond them is a TemplateError where Python would grow.
#pragma once
#include <string>

#include "chat/value.h"

namespace difftx::chat {

Value binary_op(const std::string& op, const Value& a, const Value& b);
Value negate(const Value& v);
bool contains(const Value& container, const Value& item);

}  // namespace difftx::chat
