#include "serve/messages_output.h"

#include "core/error.h"
#include "io/json_file.h"
#include "serve/reasoning_envelope.h"

namespace difftx::serve {
namespace {

using nlohmann::json;

json anthropic_usage(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens - u.cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", u.cached_tokens},
          {"output_tokens", u.completion_tokens}};
}

json stop_sequence(const MessageStop& stop) { return stop.sequence ? json(*stop.sequence) : json(nullptr); }

// A call's arguments as the object tool_use takes (a call the grammar constrained is one; anything
// else, or nested past what the reply's JSON can be written with, is kept as its text under
// "arguments", never dropped).
json tool_input(const std::string& arguments) {
  try {
    json input = io::parse_json_text(arguments, "arguments");
    if (input.is_object()) return input;
  } catch (const Error&) {
  }
  return {{"arguments", arguments}};
}

}  // namespace

MessageStop message_stop(const std::string& finish_reason, const std::string& stop_string) {
  if (finish_reason == "length") return {"max_tokens", std::nullopt};
  if (finish_reason == "tool_calls") return {"tool_use", std::nullopt};
  if (!stop_string.empty()) return {"stop_sequence", stop_string};
  return {"end_turn", std::nullopt};
}

json message_object(const ResponseHeader& h, const ChoiceResult& reply, const MessageStop& stop, const Usage& usage) {
  json content = json::array();
  if (reply.reasoning && !reply.reasoning->empty())
    content.push_back(
        {{"type", "thinking"}, {"thinking", *reply.reasoning}, {"signature", seal_reasoning(*reply.reasoning)}});
  if (!reply.text.empty() || (content.empty() && reply.tool_calls.empty()))
    content.push_back({{"type", "text"}, {"text", reply.text}});
  for (const ToolCallResult& call : reply.tool_calls)
    content.push_back(
        {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", tool_input(call.arguments)}});
  return {{"id", h.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", h.model},
          {"content", std::move(content)},
          {"stop_reason", stop.reason},
          {"stop_sequence", stop_sequence(stop)},
          {"usage", anthropic_usage(usage)}};
}

MessageEvents::MessageEvents(ResponseHeader header, int64_t prompt_tokens)
    : header_(std::move(header)), prompt_tokens_(prompt_tokens) {}

std::string MessageEvents::event(const json& value) {
  return "event: " + value["type"].get<std::string>() + "\ndata: " + dump_json(value) + "\n\n";
}

std::string MessageEvents::start(int64_t cached_tokens) {
  const json message = {{"id", header_.id},           {"type", "message"},
                        {"role", "assistant"},        {"model", header_.model},
                        {"content", json::array()},   {"stop_reason", nullptr},
                        {"stop_sequence", nullptr},
                        {"usage", anthropic_usage({prompt_tokens_, 0, cached_tokens})}};
  return event({{"type", "message_start"}, {"message", message}});
}

size_t MessageEvents::open(std::string& out, const std::string& type, const std::string& id, const std::string& name) {
  if (open_ && open_type_ == type && type != "tool_use") return *open_;
  close_open(out);
  json block;
  if (type == "thinking") block = {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}};
  else if (type == "text") block = {{"type", "text"}, {"text", ""}};
  else block = {{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", json::object()}};
  open_ = blocks_++;
  open_type_ = type;
  thinking_.clear();
  out += event({{"type", "content_block_start"}, {"index", *open_}, {"content_block", block}});
  return *open_;
}

void MessageEvents::close_open(std::string& out) {
  if (!open_) return;
  if (open_type_ == "thinking")
    out += event({{"type", "content_block_delta"},
                  {"index", *open_},
                  {"delta", {{"type", "signature_delta"}, {"signature", seal_reasoning(thinking_)}}}});
  out += event({{"type", "content_block_stop"}, {"index", *open_}});
  open_.reset();
}

std::string MessageEvents::push(const ReplyDelta& delta, const std::vector<std::string>& call_ids) {
  std::string out;
  if (!delta.reasoning.empty()) {
    const size_t index = open(out, "thinking");
    thinking_ += delta.reasoning;
    out += event({{"type", "content_block_delta"},
                  {"index", index},
                  {"delta", {{"type", "thinking_delta"}, {"thinking", delta.reasoning}}}});
  }
  if (!delta.content.empty()) {
    const size_t index = open(out, "text");
    out += event({{"type", "content_block_delta"},
                  {"index", index},
                  {"delta", {{"type", "text_delta"}, {"text", delta.content}}}});
  }
  for (size_t k = 0; k < delta.calls.size(); ++k) {
    const ToolCallDelta& d = delta.calls[k];
    if (!d.name.empty()) call_blocks_.push_back(open(out, "tool_use", call_ids.at(k), d.name));
    if (d.index >= call_blocks_.size() || d.arguments.empty()) continue;
    out += event({{"type", "content_block_delta"},
                  {"index", call_blocks_[d.index]},
                  {"delta", {{"type", "input_json_delta"}, {"partial_json", d.arguments}}}});
  }
  return out;
}

std::string MessageEvents::finish(const MessageStop& stop, const Usage& usage) {
  std::string out;
  if (blocks_ == 0) open(out, "text");  // a reply with nothing in it: one empty text block, as whole
  close_open(out);
  out += event({{"type", "message_delta"},
                {"delta", {{"stop_reason", stop.reason}, {"stop_sequence", stop_sequence(stop)}}},
                {"usage", anthropic_usage(usage)}});
  return out + event({{"type", "message_stop"}});
}

std::string MessageEvents::error(const ApiError& e) { return event(error_body(e, ErrorShape::anthropic)); }

}  // namespace difftx::serve
