// Tool calls as Qwen3-Coder writes them (the qwen3_coder family, tool_format.h), each in a
// <tool_call> block:
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   </function>
// A parameter's value is the text between its tags less one newline at each end, read by the
// types its schema allows (grammar::schema_types; a parameter the function's schema does not list
// has additionalProperties' schema where that is one, else is a string):
//   - with string among them: the text as it is; null for "null" (any case) where null is too;
//   - otherwise: null, true, false for those words (any case) where their type is allowed, else
//     the text's JSON where it is JSON of an allowed type (kept as written less white space), else
//     a Python literal of an allowed object or array type, else the text as a string.
// The grammar (grammar::JsonGrammar::xml_parameters) writes values that read back as they
// validate. The arguments are the JSON object of the parameters in the order written.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "serve/python_literal.h"
#include "serve/tool_format.h"

namespace difftx::serve {

// The call at text[i] (<function=...>...</function>), i moving past it; the value types from the
// named function's schema among `functions`. more: the text ends inside it, and `call` holds its
// name once the name's tag is closed, and the arguments of the parameters read so far (a prefix of
// the finished call's); bad: no call, whatever follows.
Scan read_xml_call(std::string_view text, size_t& i, ToolCall& call, const std::vector<ToolFunction>& functions);

}  // namespace difftx::serve
