// Parses a chat template's tokens into statements. What is outside the supported subset (a tag
// such as macro or include, an unknown filter or test, *args) is a difftx::Error naming the
// construct and its line, as jinja2's own syntax errors are.
#pragma once
#include <string>

#include "chat/ast.h"

namespace difftx::chat {

Body parse_template(const std::string& source);

}  // namespace difftx::chat
