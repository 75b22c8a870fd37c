// GET /: a chat page compiled into the binary (no CDN, no build step). It streams replies from
// the API (fetch + server-sent events), shows tokens/s, and has a completion mode for base
// models (the default when the model has no chat template). ?send=TEXT sends TEXT on load
// (&mode=chat|completion, &max_tokens=N), for tests.
#pragma once

namespace difftx::serve {

extern const char* const kChatPage;

}  // namespace difftx::serve
