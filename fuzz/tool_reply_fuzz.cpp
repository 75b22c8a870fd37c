// libFuzzer target: a chat reply read back into reasoning, content and tool calls (src/serve/
// reply_reader.h), whole and streamed. The first byte picks the tool-call family (its low six
// bits) and whether a <think> block is read (its top two); the next two seed where the stream is
// cut; the rest is the reply. Never a crash or a sanitizer report, whatever the bytes; and the
// stream's pieces keep their shape: a call's first piece names it, its index one past the last
// call's, the others add arguments.
#include <cstdint>
#include <cstdlib>
#include <iterator>

#include "fuzz_input.h"
#include "serve/reply_reader.h"

using namespace difftx::serve;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  constexpr ToolFormat kFormats[] = {
      ToolFormat::hermes,       ToolFormat::llama3_json, ToolFormat::mistral,      ToolFormat::pythonic,
      ToolFormat::phi4_mini,    ToolFormat::granite,     ToolFormat::deepseek_v3,  ToolFormat::deepseek_v31,
      ToolFormat::qwen3_coder,  ToolFormat::glm45,       ToolFormat::kimi_k2,      ToolFormat::internlm,
      ToolFormat::hunyuan_a13b, ToolFormat::minimax,     ToolFormat::xlam,         ToolFormat::granite_20b_fc,
      ToolFormat::nemotron_json, ToolFormat::seed_oss,    ToolFormat::mistral_v11};
  // A parameter of each type (qwen3_coder and glm45 read values by them), others integers.
  static const std::vector<ToolFunction> kFunctions = {
      {"f", nlohmann::ordered_json::parse(R"({"type": "object", "properties": {"s": {"type": "string"},
          "n": {"type": "number"}, "b": {"type": "boolean"}, "o": {"type": ["object", "null"]},
          "a": {"type": "array"}, "r": {"$ref": "#/properties/n"}}, "additionalProperties": {"type": "integer"}})")}};
  ReplyFormat format;
  format.tools = kFormats[(data[0] & 0x3f) % std::size(kFormats)];  // a seed's stays as families come
  format.functions = kFunctions;
  if (data[0] & 0x80) format.reasoning = ReasoningMarkers{};
  format.reasoning_open = (data[0] & 0x40) != 0;
  const size_t step = 1 + data[1] % 7, offset = data[2];
  const std::string_view reply = difftx::fuzz::as_text(data + 3, size - 3);

  (void)read_reply(format, reply, false);
  const ReplyParts whole = read_reply(format, reply, true);
  ReplyStream stream(format);
  std::vector<std::string> names;
  for (size_t from = 0, to = offset % (step + 1);; from = to, to = std::min(reply.size(), to + step)) {
    const bool final = to >= reply.size();
    for (const ToolCallDelta& d : stream.push(reply.substr(from, to - from), final).calls) {
      if ((d.index == names.size()) == d.name.empty() || d.index > names.size()) std::abort();
      if (d.index == names.size()) names.push_back(d.name);
    }
    if (final) break;
  }
  if (stream.calls_sent() != names.size()) std::abort();
  for (size_t k = 0; k < whole.calls.size(); ++k)
    if (whole.calls[k].name.empty()) std::abort();
  return 0;
}
