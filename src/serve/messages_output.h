// A chat reply as Anthropic's Messages API returns it (serve/messages_request.h): the message with
// its content blocks - thinking, text, tool_use -, whole or as the stream's events (message_start,
// content_block_start, content_block_delta, content_block_stop, message_delta, message_stop), and
// errors in Anthropic's shape.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/api_error.h"
#include "serve/openai_response.h"
#include "serve/reply_reader.h"

namespace difftx::serve {

// Why a reply ended, as Anthropic says it: "end_turn", "max_tokens", "stop_sequence" (with the
// stop string) or "tool_use".
struct MessageStop {
  std::string reason;
  std::optional<std::string> sequence;
};
MessageStop message_stop(const std::string& finish_reason, const std::string& stop_string);

// The message: "msg_..." `header.id`, its content blocks (a thinking block where the reply thought
// something, as the stream has it, its signature the thinking sealed as reasoning_envelope.h seals
// it; a stream sends it as a signature_delta before the block stops), stop reason and usage (input_tokens
// counted without the prompt tokens the prefix cache held, which are cache_read_input_tokens).
nlohmann::json message_object(const ResponseHeader& header, const ChoiceResult& reply, const MessageStop& stop,
                              const Usage& usage);

// A streamed reply's events, in order, as SSE text ("event: TYPE" and "data: JSON").
class MessageEvents {
 public:
  MessageEvents(ResponseHeader header, int64_t prompt_tokens);
  // message_start, its usage the prompt's tokens less the `cached_tokens` the prefix cache held (the
  // stream sends it with the reply's first event, which says how many).
  std::string start(int64_t cached_tokens);
  // What the reply read so far adds; `call_ids[k]`: the id of delta.calls[k]'s call where it begins.
  std::string push(const ReplyDelta& delta, const std::vector<std::string>& call_ids);
  // The open block closed, then message_delta (stop reason, usage) and message_stop.
  std::string finish(const MessageStop& stop, const Usage& usage);
  std::string error(const ApiError& e);  // an `error` event

 private:
  static std::string event(const nlohmann::json& value);
  // The open block of this type, opened (after closing the one before) where it is not.
  size_t open(std::string& out, const std::string& type, const std::string& id = "", const std::string& name = "");
  void close_open(std::string& out);

  ResponseHeader header_;
  int64_t prompt_tokens_;
  size_t blocks_ = 0;                 // blocks started
  std::vector<size_t> call_blocks_;   // per call of the reply: its block
  std::optional<size_t> open_;        // the block being written
  std::string open_type_;
  std::string thinking_;              // the open thinking block's text, for its signature
};

}  // namespace difftx::serve
