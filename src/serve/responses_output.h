// A chat reply as OpenAI's Responses API returns it (serve/responses_request.h): the Response
// object with its output items - the reasoning, the message, the function calls -, whole or as the
// stream's typed events (response.created, response.output_item.added, response.output_text.delta,
// response.function_call_arguments.delta, ..., response.completed), each with its sequence number.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/openai_response.h"
#include "serve/reply_reader.h"

namespace difftx::serve {

// What a request's `include` asks its Response to carry: each output_text's logprobs
// ("message.output_text.logprobs"; the tokens given as ContentTokens finds them), each reasoning
// item's encrypted_content ("reasoning.encrypted_content", serve/reasoning_envelope.h).
struct ResponseIncludes {
  bool logprobs = false, encrypted_reasoning = false;
};

// An item's id: its kind's prefix ("msg_", "fc_", ...), the response's id without "resp_", and its
// place: its index in the output, or "in" and its index among the stored input items.
std::string item_id(const ResponseHeader& h, const char* prefix, const std::string& place);
// The id prefix of an item of its type: "fc_" (function_call), "fco_" (function_call_output), "rs_"
// (reasoning), else "msg_".
const char* item_prefix(const nlohmann::ordered_json& item);

// The Response object: `header.id` "resp_...", the request's `settings`, `status` ("in_progress",
// "completed", or "incomplete": cut at max_output_tokens or the context), the output items and,
// once done, the usage.
nlohmann::json response_object(const ResponseHeader& header, const nlohmann::json& settings,
                               const std::string& status, nlohmann::json output, const Usage* usage);

// A whole reply's output items: its reasoning block (where it has text), its message (where it has
// text, or nothing else), its function calls, as a stream's events add them up. `cut`: it ended at its length limit. With logprobs included,
// reply.tokens are the content's tokens.
nlohmann::json output_items(const ResponseHeader& header, const ChoiceResult& reply, bool cut,
                            ResponseIncludes includes);

// A streamed reply's events, in order, as SSE text ("event: TYPE" and "data: JSON").
class ResponseEvents {
 public:
  ResponseEvents(ResponseHeader header, nlohmann::json settings, ResponseIncludes includes);
  // response.created, response.in_progress; a background response's (settings' background) is
  // created queued, then response.queued, then in progress.
  std::string start();
  // What the reply read so far adds; `call_ids[k]`: the id of delta.calls[k]'s call where it begins;
  // `content_tokens`: the tokens of delta.content (ContentTokens), where logprobs are included.
  std::string push(const ReplyDelta& delta, const std::vector<std::string>& call_ids,
                   const std::vector<TokenInfo>& content_tokens);
  // Every open item done, then response.completed (or response.incomplete where `cut`).
  std::string finish(bool cut, const Usage& usage);
  const nlohmann::json& response() const { return response_; }  // the Response finish() sent (null before)
  // The Response as the stream stands, ended with `status` (a cancelled or failed run's): the items
  // so far, the one being written cut off there.
  nlohmann::json ended_response(const std::string& status);
  std::string error(const nlohmann::json& error_body);  // an `error` event

 private:
  std::string event(nlohmann::json value);
  // The open item of this type, opened (after closing the one before) where it is not; the
  // events that took go into `out`.
  size_t open(std::string& out, const std::string& type, const std::string& call_id = "",
              const std::string& name = "");
  void close_open(std::string& out, bool cut);

  ResponseHeader header_;
  nlohmann::json settings_;
  ResponseIncludes includes_;
  int64_t sequence_ = 0;
  nlohmann::json items_ = nlohmann::json::array();  // every item, as its output_item.done has it
  std::vector<std::string> texts_;                   // per item: its text, or its arguments
  std::vector<nlohmann::json> logprobs_;             // per item: its text's logprobs (a message's)
  std::vector<size_t> call_items_;                   // per call of the reply: its item
  std::optional<size_t> open_;                       // the item being written
  nlohmann::json response_;
};

}  // namespace difftx::serve
