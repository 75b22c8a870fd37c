// Python's printf-style string formatting, `format % args`: what jinja2's `%` operator on a
// string and its format filter ("%s" | format(x)) do.
#pragma once
#include <string>

#include "chat/value.h"

namespace difftx::chat {

// args: a tuple gives the positional values, a dict the %(key)s values (and is one value for a
// plain %s), anything else is a single value. Python's errors (not enough arguments, not all
// arguments converted, an unsupported character, ...) are TemplateErrors.
std::string percent_format(const std::string& format, const Value& args);

}  // namespace difftx::chat
