#include "serve/reply_reader.h"

#include <algorithm>

namespace difftx::serve {

ReplyParts read_reply(const ReplyFormat& f, std::string_view text, bool final) {
  ReplyParts p;
  std::string rest(text);
  if (f.reasoning) {
    if (f.reasoning_open) text.remove_prefix(open_marker_end(text, *f.reasoning, final).value_or(0));
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

std::vector<int32_t> unread_special_tokens(const data::Tokenizer& tokenizer, const ReplyFormat& format) {
  std::vector<std::string> read;
  if (format.tools) read = tool_parser_markers(*format.tools);
  if (format.reasoning) read.insert(read.end(), {format.reasoning->open, format.reasoning->close});
  std::vector<int32_t> ids;
  for (const data::AddedToken& t : tokenizer.added().tokens())
    if (t.special && std::find(read.begin(), read.end(), t.content) == read.end()) ids.push_back(t.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

ReplyDelta ReplyStream::push(std::string_view delta, bool final) {
  text_ += delta;
  ReplyDelta out;
  if (format_.reasoning && format_.reasoning_open && !body_from_) {  // a repeated open marker is not reasoning
    const std::optional<size_t> body = open_marker_end(text_, *format_.reasoning, final);
    if (!body) return out;
    body_from_ = *body;
  }
  if (format_.reasoning && !content_from_) {
    // The block's body is read from its first byte not sent (before which no close marker
    // starts), so a push costs its delta, not the text so far.
    const std::string_view rest = std::string_view(text_).substr(body_from_.value_or(0));
    ReasoningSplit split = split_reasoning(rest, *format_.reasoning, body_from_ || format_.reasoning_open, final);
    out.reasoning = std::move(split.reasoning);
    if (!split.had_block && (split.held > 0 || (rest.empty() && !final))) return out;  // a marker may be coming
    if (split.had_block && !split.closed) {
      body_from_ = text_.size() - split.held;
      return out;
    }
    content_from_ = text_.size() - split.content.size();
  }
  const std::string_view text = std::string_view(text_).substr(content_from_.value_or(0));
  if (!format_.tools) {
    out.content = std::string(text.substr(content_));
    content_ = text.size();
    return out;
  }
  const ToolParse all = parse_tool_calls(*format_.tools, text, final, format_.functions);
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
