// Tool calls whose arguments are XML parameters, each call in a <tool_call> block (tool_format.h):
//   qwen3_coder (Qwen3-Coder)           glm45 (GLM-4.5 / 4.6; GLM-4.7 without the newlines)
//   <function=get_weather>              get_weather
//   <parameter=city>                    <arg_key>city</arg_key>
//   Paris                               <arg_value>Paris</arg_value>
//   </parameter>                        <arg_key>days</arg_key>
//   <parameter=days>                    <arg_value>3</arg_value>
//   3
//   </parameter>
//   </function>
// A parameter's value is the text between its tags (qwen3_coder: less one newline at each end),
// read by the types its schema allows (grammar::schema_types; a parameter the function's schema
// does not list has additionalProperties' schema where that is one, else is a string):
//   - with string among them: the text as it is; null for "null" (any case) where null is too;
//   - otherwise (glm45: the text less white space at its ends): null, true, false for those words
//     (any case) where their type is allowed, else the text's JSON where it is JSON of an allowed
//     type (kept as written less white space), else a Python literal of an allowed object or array
//     type, else the text as a string.
// The grammar (grammar::JsonGrammar::xml_parameters with the family's tags) writes values that
// read back as they validate. The arguments are the JSON object of the parameters in the order
// written.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "serve/python_literal.h"
#include "serve/tool_format.h"

namespace difftx::serve {

// The tags. A value's closing tag: its raw text never holds that.
inline constexpr std::string_view kXmlParameterOpen = "<parameter=", kXmlParameterClose = "</parameter>";
inline constexpr std::string_view kGlmKeyOpen = "<arg_key>", kGlmKeyClose = "</arg_key>",
                                  kGlmValueOpen = "<arg_value>", kGlmValueClose = "</arg_value>";

// The call at text[i], i moving past it; the value types from the named function's schema among
// `functions`. more: the text ends inside it, and `call` holds its name once that is ended, and the
// arguments of the parameters read so far (a prefix of the finished call's); bad: no call, whatever
// follows.
// qwen3_coder: <function=...>...</function>.
Scan read_xml_call(std::string_view text, size_t& i, ToolCall& call, const std::vector<ToolFunction>& functions);
// glm45: NAME (ended by a newline or a tag) and its <arg_key> / <arg_value> pairs, up to what
// follows them (the block's </tool_call>, for the caller to read).
Scan read_glm_call(std::string_view text, size_t& i, ToolCall& call, const std::vector<ToolFunction>& functions);

}  // namespace difftx::serve
