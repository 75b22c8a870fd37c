// Runs a parsed chat template over its variables, with jinja2's scoping: a for loop's body is a
// scope of its own (a set inside it is gone after the iteration; namespace() objects carry
// values out), and so are set and filter blocks; if bodies are not.
#pragma once
#include <string>

#include "chat/ast.h"

namespace difftx::chat {

// variables: the top-level names (messages, bos_token, raise_exception, ...).
std::string render_body(const Body& body, const Dict& variables);

}  // namespace difftx::chat
