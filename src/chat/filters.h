// jinja2's built-in filters and tests that chat templates use, plus transformers' tojson
// (json.dumps with ensure_ascii off, not HTML-escaped).
#pragma once
#include <string>

#include "chat/value.h"

namespace difftx::chat {

bool has_filter(const std::string& name);
bool has_test(const std::string& name);
Value apply_filter(const std::string& name, const Value& input, const CallArgs& args);
bool apply_test(const std::string& name, const Value& input, const CallArgs& args);

}  // namespace difftx::chat
