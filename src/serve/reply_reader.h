// A chat reply read back into its parts: the reasoning block (reasoning.h), the content and the
// tool calls (tool_format.h) - whole, or as it streams, each part sent once and in order, text
// that may still turn out to be a marker held back until it is settled.
#pragma once
#include <cstddef>
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
};

struct ReplyParts {
  std::string reasoning, content;
  bool had_reasoning = false;
  std::vector<ToolCall> calls;
};

ReplyParts read_reply(const ReplyFormat& format, std::string_view text, bool final = true);

class ReplyStream {
 public:
  explicit ReplyStream(ReplyFormat format) : format_(std::move(format)) {}
  // What the text's growth by `delta` settled (final: nothing more comes): new reasoning, new
  // content, calls completed since the last push.
  ReplyParts push(std::string_view delta, bool final);
  size_t calls_sent() const { return calls_; }

 private:
  ReplyFormat format_;
  std::string text_;
  size_t reasoning_ = 0, content_ = 0, calls_ = 0;  // sent so far
};

}  // namespace difftx::serve
