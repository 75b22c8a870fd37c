// How a model family writes tool calls, as its chat template teaches it:
//   hermes      <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, one block per call
//               (Hermes, Qwen 2.5 / 3, and templates like them)
//   llama3_json {"name": ..., "parameters": {...}} as the whole reply, optionally after
//               <|python_tag|>, several joined by ";" (Llama 3.1 / 3.2 JSON tool calling)
//   mistral     [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...] (Mistral Nemo, Mistral Small
//               3.1: Mistral's tokenizers before v11)
//   mistral_v11 [TOOL_CALLS]NAME[ARGS]{...}, one per call, back to back (Mistral Small 3.2,
//               Magistral, Devstral, Ministral 3: its tokenizers from v11 on; some write
//               [CALL_ID]ID before [ARGS]). Both Mistral families read either form; each writes its own.
//   pythonic    [get_weather(city="Paris"), add(a=1, b=2)] as the whole reply, optionally in
//               <|python_start|> ... <|python_end|>; the arguments Python literals (Llama 3.2 /
//               Llama 4 / Gemma 3 pythonic templates)
//   phi4_mini   functools[{"name": ..., "arguments": {...}}, ...] (Phi-4-mini)
//   granite     <|tool_call|>[{"name": ..., "arguments": {...}}, ...] (Granite 3.x)
//   deepseek_v3 <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```
//               <｜tool▁call▁end｜>, one per call, then <｜tool▁calls▁end｜> (DeepSeek V3, R1)
//   deepseek_v31 the same, each call <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
//               (DeepSeek V3.1)
//   qwen3_coder <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n...</function>
//               \n</tool_call>, one block per call, the values raw text read by their schemas'
//               types (xml_calls.h; Qwen3-Coder)
//   glm45       <tool_call>NAME\n<arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n...</tool_call>,
//               one block per call (the newlines optional: GLM-4.7 writes none), the values read
//               as qwen3_coder's (xml_calls.h; GLM-4.5 / 4.6 / 4.7)
//   kimi_k2     <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:INDEX
//               <|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>;
//               functions.NAME:INDEX is the call's id (Kimi K2)
//   internlm    <|action_start|><|plugin|>\n{"name": ..., "parameters" | "arguments": {...}}
//               <|action_end|>, one block per call (InternLM 2 / 2.5)
//   hunyuan_a13b <tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls> (Hunyuan-A13B)
//   minimax     <tool_calls>\n{"name": ..., "arguments": {...}}\n...</tool_calls>, a call a line
//               (MiniMax-M1)
//   xlam        [{"name": ..., "arguments": {...}}, ...] as the whole reply, or anywhere in a
//               ```json fence, after [TOOL_CALLS] or in <tool_call> (Salesforce xLAM)
//   granite_20b_fc <function_call> {"name": ..., "arguments": {...}} per call (Granite-20B-
//               FunctionCalling)
//   nemotron_json <TOOLCALL>[{"name": ..., "arguments": {...}}, ...]</TOOLCALL> (Nemotron Nano 2)
// The family is recognised from the template's text or named with `--tool-parser`. For each:
// the grammar of a turn's calls (so that a constrained call names a listed function and its
// arguments validate against its parameters), and the parser that turns the reply back into
// content and calls, whole or as it streams.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/json_grammar.h"

namespace difftx::data {
class Tokenizer;
}

namespace difftx::serve {

enum class ToolFormat {
  hermes,
  llama3_json,
  mistral,
  mistral_v11,
  pythonic,
  phi4_mini,
  granite,
  deepseek_v3,
  deepseek_v31,
  qwen3_coder,
  glm45,
  kimi_k2,
  internlm,
  hunyuan_a13b,
  minimax,
  xlam,
  granite_20b_fc,
  nemotron_json,
  seed_oss
};

// The names above (and vLLM's names for them: llama4_json, llama4_pythonic, phi4_mini_json,
// qwen3_xml, glm47, granite-20b-fc); nullopt for another.
std::optional<ToolFormat> tool_format_named(std::string_view name);
const char* tool_format_name(ToolFormat format);
// The names joined by `separator`, for messages and help.
std::string tool_format_names(std::string_view separator);
// The family a chat template's text writes tool calls in; nullopt when it shows none.
std::optional<ToolFormat> tool_format_of_template(std::string_view source);

struct ToolFunction {
  std::string name;
  nlohmann::ordered_json parameters;  // a JSON Schema for the arguments, its keys in the order written
};

// The form `--tool-parser mistral` writes for a model: mistral_v11 where the tokenizer has [ARGS]
// as an added token (Mistral's tokenizers from v11 on), as vLLM decides; any other format as it is.
ToolFormat tool_format_for_tokenizer(ToolFormat format, const data::Tokenizer& tokenizer);

// A name OpenAI allows a function (and a response_format's json_schema): 1 to 64 letters, digits,
// '_' or '-'.
bool valid_function_name(std::string_view name);

struct ToolCall {
  std::string name;
  // The JSON text of an object: the model's own less its white space (JSON families), or the
  // Python literals as JSON (pythonic); keys in the order written.
  std::string arguments;
  // The id the model wrote for the call (kimi_k2), none that an earlier call of the reply has;
  // empty: the server makes one.
  std::string id;
};

// A reply split into its content and its calls. `pending`: the text may still become a call
// (a marker begun, a call not finished), so streaming holds it back. `open`: the last call is
// still being written; its name is known, its arguments are those so far (a prefix of the
// finished call's).
struct ToolParse {
  std::string content;
  std::vector<ToolCall> calls;
  bool pending = false, open = false;
};

// Parses a reply (after any reasoning). final: nothing more will come, so text held back for a
// marker that might have been starting is content after all; a call the text ends inside is a
// call cut short once it is named (its arguments those written, as a stream sent them), content
// before that. `functions`: the tools offered, whose parameters' types say how qwen3_coder's and
// glm45's values read (the other families need none).
ToolParse parse_tool_calls(ToolFormat format, std::string_view text, bool final,
                           const std::vector<ToolFunction>& functions = {});

// The text that opens a turn's calls (a control token of the family's tokenizer, where it has
// one): what a constrained `auto` reply may write before its calls are constrained.
std::string tool_calls_marker(ToolFormat format);
// Every marker a turn of the family's calls writes, one token each in the models that use it:
// the opening one and the rest (DeepSeek's and Kimi's call tokens, InternLM's <|plugin|> and
// <|action_end|>, GLM's tags, closing markers). Where the tokenizer has one as a control token, a
// constrained reply may write it as that token (grammar::TokenMasks), as the model was trained to.
std::vector<std::string> tool_call_markers(ToolFormat format);
// Every marker the family's parser reads: tool_call_markers and those it also takes (Mistral's
// [ARGS] and [CALL_ID] for either form, xLAM's [TOOL_CALLS] and <tool_call> blocks, Kimi's section
// markers in the singular, pythonic's <|python_end|>). Where one is a special token, a reply's text keeps it for the parser
// (skip_special_tokens leaves the others out).
std::vector<std::string> tool_parser_markers(ToolFormat format);

// Rules of `j`'s builder for a turn of 1 to max_calls calls of the listed functions, from the
// opening marker on; errors in a function's parameters are GrammarErrors at
// "#/tools/<i>/function/parameters..." (pythonic: also a name or a property name that is no
// Python identifier, at ".../name" or the property).
int32_t tool_calls_rule(grammar::JsonGrammar& j, ToolFormat format, const std::vector<ToolFunction>& functions,
                        int64_t max_calls);
// A reply in `auto` mode: free text that never writes the marker, optionally followed by a
// turn of calls.
int32_t tool_choice_auto_rule(grammar::JsonGrammar& j, ToolFormat format, int32_t calls);

}  // namespace difftx::serve
