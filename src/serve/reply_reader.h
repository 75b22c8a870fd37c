// A chat reply read back into its parts: the reasoning block (reasoning.h), the content and the
// tool calls (tool_format.h) - whole, or as it streams, each part sent once and in order, text
// that may still turn out to be a marker held back until it is settled.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/reasoning.h"
#include "serve/tool_format.h"

namespace difftx::serve {

struct ReplyFormat {
  std::optional<ReasoningMarkers> reasoning;  // read a reasoning block
  bool reasoning_open = false;                // the prompt left it open
  std::optional<ToolFormat> tools;            // read tool calls
  std::vector<ToolFunction> functions;        // the tools offered (qwen3_coder, glm45 read values by types)
};

struct ReplyParts {
  std::string reasoning, content;
  bool had_reasoning = false;
  std::vector<ToolCall> calls;  // before the end of the text, the last may still be being written
};

ReplyParts read_reply(const ReplyFormat& format, std::string_view text, bool final = true);

// The special tokens (tokenizer.json's "special": true, tiktoken's special tokens) a reply's text
// leaves out, ascending, as vLLM's skip_special_tokens does: all of them but the markers `format`
// reads (its tool parser's, its reasoning block's). A stray <|im_start|> or reserved token the
// model writes is not content; [TOOL_CALLS] is what the parser finds calls by.
std::vector<int32_t> unread_special_tokens(const data::Tokenizer& tokenizer, const ReplyFormat& format);

// A piece of a streamed call (OpenAI's tool_call delta): the first of a call carries its name
// (and the model's id for it, if any), the others more of its arguments' text.
struct ToolCallDelta {
  size_t index = 0;
  std::string name;  // empty but in a call's first piece
  std::string arguments;
  std::string id;  // ToolCall::id, in the first piece
};

struct ReplyDelta {
  std::string reasoning, content;
  std::vector<ToolCallDelta> calls;
};

// A reply read as it streams. A call goes out as soon as it is named, and its arguments as they
// are written; one cut short stays a call (as read_reply has it). A call of an unconstrained
// reply that later proves malformed would have been sent all the same: the server constrains
// every reply whose calls it reads.
class ReplyStream {
 public:
  explicit ReplyStream(ReplyFormat format) : format_(std::move(format)) {}
  // What the text's growth by `delta` settled (final: nothing more comes).
  ReplyDelta push(std::string_view delta, bool final);
  size_t calls_sent() const { return arguments_sent_.size(); }

 private:
  ReplyFormat format_;
  std::string text_;
  std::optional<size_t> body_from_;     // the reasoning block's first byte not sent, while it is open
  std::optional<size_t> content_from_;  // where the content starts, once it has
  size_t content_ = 0;                  // content bytes sent
  std::vector<size_t> arguments_sent_;  // per call begun
};

}  // namespace difftx::serve
