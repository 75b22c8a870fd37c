// The Responses API's `encrypted_content` of a reasoning item (include
// "reasoning.encrypted_content"): its text, sealed so that a client that keeps nothing server-side
// (`store: false`) can send the reasoning back in a later request's input, as OpenAI's clients do
// (Codex, the Agents SDK); and the `signature` of a thinking block of Anthropic's Messages API,
// which clients send back with the block. The server holds no key, so the seal is an envelope, not
// encryption: a version tag and the text in base64. A client treats it as opaque; an
// encrypted_content sent back that is not one is an error (OpenAI's `invalid_encrypted_content`),
// while a thinking block's signature is not checked (its text is what the template reads).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace difftx::serve {

std::string seal_reasoning(std::string_view text);
// The text sealed in `envelope`, or nullopt where it is not one seal_reasoning made.
std::optional<std::string> open_reasoning(std::string_view envelope);

}  // namespace difftx::serve
