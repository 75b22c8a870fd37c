// Python's str.format and str.format_map as jinja2's sandbox runs them (string.Formatter): fields {},
// {0}, {name}, {0[key]}, {x.attr} (looked up as the sandbox looks them up: a dict's attribute is its
// key, a missing one undefined), conversions !s !r !a, format specs (format_spec.h) with fields nested
// one level deep, {{ and }}. Python's errors (mixing automatic and manual numbering, an index out of
// range, a missing key, a malformed field) are TemplateErrors with its messages.
#pragma once
#include <string>

#include "chat/value.h"

namespace difftx::chat {

// keywords: the keyword arguments, a dict (format_map's mapping may be any value; a field that needs
// a key of what is no dict fails then).
std::string str_format(const std::string& format, const List& positional, const Value& keywords);

}  // namespace difftx::chat
