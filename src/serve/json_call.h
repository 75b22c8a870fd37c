// Tool calls written as JSON objects, {"name": ..., "arguments" | "parameters": {...}}, read from
// a reply that may still grow. A call's arguments are the model's own JSON text less the white
// space between its tokens: keys in the order written, numbers and escapes as written. So the
// arguments of a call the text ends inside are a prefix of the finished call's, and a stream can
// send them piece by piece.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "serve/python_literal.h"
#include "serve/tool_format.h"

namespace difftx::serve {

// The literal at text[i], i moving past it; more: the text ends inside it.
Scan expect(std::string_view text, size_t& i, std::string_view literal);

// The index of the first byte from i on that is not JSON white space.
size_t skip_json_space(std::string_view text, size_t i);

// Moves i past the JSON value at text[i]: more when the text ends inside it, bad when no value
// starts there. Only its brackets and strings are followed; json::parse checks the rest.
Scan skip_json_value(std::string_view text, size_t& i);

// JSON text (or a prefix of it) less the white space outside its strings; of a prefix, without a
// UTF-8 character cut short at its end.
std::string json_without_space(std::string_view text);

// The call object at text[i], i moving past it. done: `call` is the call; more: the text ends
// inside it, and `call` holds what is known (its name once the name's string is closed, and then
// the arguments so far once their object has begun); bad: no call, whatever follows.
Scan read_json_call(std::string_view text, size_t& i, ToolCall& call);

// Appends a member, `"key":value_json`, to arguments begun as "{" (the reader closes them with
// "}"): a call's arguments built a member at a time, those read so far a prefix of the finished
// call's (pythonic, qwen3_coder and glm45 calls).
void add_argument(std::string& arguments, const std::string& key, std::string_view value_json);

// The arguments written as an object (`{...}`), or as a string holding one, as a call keeps
// them; empty when they are neither.
std::string arguments_text(std::string_view value);

}  // namespace difftx::serve
