#include "serve/reply_reader.h"

namespace difftx::serve {

ReplyParts read_reply(const ReplyFormat& f, std::string_view text, bool final) {
  ReplyParts p;
  std::string rest(text);
  if (f.reasoning) {
    ReasoningSplit split = split_reasoning(text, *f.reasoning, f.reasoning_open, final);
    p.reasoning = std::move(split.reasoning);
    p.had_reasoning = split.had_block;
    rest = std::move(split.content);
  }
  if (!f.tools) {
    p.content = std::move(rest);
    return p;
  }
  ToolParse calls = parse_tool_calls(*f.tools, rest, final, f.functions);
  p.content = std::move(calls.content);
  p.calls = std::move(calls.calls);
  return p;
}

ReplyDelta ReplyStream::push(std::string_view delta, bool final) {
  text_ += delta;
  const ReplyParts all = read_reply(format_, text_, final);
  ReplyDelta out;
  if (all.reasoning.size() > reasoning_)
    out.reasoning = all.reasoning.substr(reasoning_), reasoning_ = all.reasoning.size();
  if (all.content.size() > content_) out.content = all.content.substr(content_), content_ = all.content.size();
  for (size_t k = 0; k < all.calls.size(); ++k) {
    const ToolCall& call = all.calls[k];
    if (k == arguments_sent_.size()) {
      out.calls.push_back({k, call.name, call.arguments, call.id});
      arguments_sent_.push_back(call.arguments.size());
    } else if (call.arguments.size() > arguments_sent_[k]) {
      out.calls.push_back({k, "", call.arguments.substr(arguments_sent_[k]), ""});
      arguments_sent_[k] = call.arguments.size();
    }
  }
  return out;
}

}  // namespace difftx::serve
