// The functions a chat template can call by name: transformers' raise_exception and
// strftime_now, and jinja2's namespace, range, dict, joiner and cycler.
#pragma once
#include <string>

#include "chat/value.h"

namespace difftx::chat {

// date: "YYYY-MM-DD" that strftime_now formats (at midnight); empty: the local time now.
void add_globals(Dict& variables, const std::string& date);

}  // namespace difftx::chat
