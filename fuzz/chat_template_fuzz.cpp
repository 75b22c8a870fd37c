// libFuzzer target: the chat template engine (src/chat/) on any bytes. The input is a template,
// a NUL byte, then a JSON array of messages (a fixed conversation with tools where the input has
// no NUL or its JSON does not parse). Parsing and rendering may only throw difftx::Error (a
// TemplateError is one): never a crash, a hang past libFuzzer's -timeout, or memory past its
// -rss_limit_mb - whatever loops, recursion or repetition a template writes.
#include <cstdint>

#include "chat/chat_template.h"
#include "core/error.h"
#include "fuzz_input.h"

namespace {

const char* const kMessages = R"([
  {"role": "system", "content": "Be brief."},
  {"role": "user", "content": "Weather in Paris?"},
  {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
  {"role": "tool", "tool_call_id": "c1", "content": "{\"temperature\": 21}"},
  {"role": "assistant", "content": [{"type": "text", "text": "21 degrees."}], "reasoning_content": "easy"}
])";
const char* const kTools = R"({"tools": [{"type": "function", "function": {"name": "get_weather",
  "description": "Now.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
  "enable_thinking": true})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = difftx::fuzz::as_text(data, size);
  const size_t nul = input.find('\0');
  const std::string source(input.substr(0, nul));
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(kMessages);
  if (nul != std::string_view::npos) {
    auto given = nlohmann::ordered_json::parse(input.substr(nul + 1), nullptr, false);
    if (given.is_array()) messages = std::move(given);
  }
  try {
    difftx::chat::ChatTemplate t = difftx::chat::ChatTemplate::parse(source);
    t.bos_token = "<s>";
    t.eos_token = "</s>";
    t.date = "2024-07-26";
    for (const bool generation_prompt : {true, false})
      (void)t.render(messages, generation_prompt, nlohmann::ordered_json::parse(kTools));
  } catch (const difftx::Error&) {
  }
  return 0;
}
