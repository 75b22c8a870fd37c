// format(value, spec): Python's format-spec mini-language
// ([[fill]align][sign][z][#][0][width][,|_][.precision][type]) as str, int, bool and float take it
// (str.format's fields end here); any other value takes only an empty spec. Python's ValueErrors
// are TemplateErrors with its messages.
#pragma once
#include <string>

#include "chat/value.h"

namespace difftx::chat {

std::string format_value(const Value& v, const std::string& spec);

}  // namespace difftx::chat
