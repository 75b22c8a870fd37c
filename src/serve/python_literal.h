// Python literals read back as JSON values, for tool calls written as Python (tool_format.h):
// None, True, False; ints and floats (decimal, an optional sign); strings in either quote, single
// or triple, with an r or u prefix, Python's escapes (\N{...} aside); lists; dicts with string
// keys. A reader works on a reply that may still grow: it tells a literal the text cut short from
// one that cannot be a literal, whatever follows.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace difftx::serve {

// done: read; more: the text ends before the literal does; bad: no literal (whatever follows).
enum class Scan { done, more, bad };

// Reads the literal at text[i] into `out`, moving i past it; a dict's keys stay in the order written.
Scan read_python_literal(std::string_view text, size_t& i, nlohmann::ordered_json& out);

// Reads a Python identifier (ASCII) at text[i] into `out`: `more` when it reaches the end.
Scan read_python_identifier(std::string_view text, size_t& i, std::string& out);

// Whitespace Python skips between a bracket's items (line continuations too).
size_t skip_python_space(std::string_view text, size_t i);

}  // namespace difftx::serve
