// The ids the server makes: for responses, completions, conversations and their items, and tool calls.
#pragma once
#include <string>

namespace difftx::serve {

// The prefix ("chatcmpl-", "resp_", "conv_", "msg_", ...), then 24 hex digits: 64 random bits and a
// process-wide counter, so never the same id twice in a process.
std::string unique_id(const char* prefix);
// `count` random letters and digits (a tool call's id).
std::string random_alphanumerics(int count);

}  // namespace difftx::serve
