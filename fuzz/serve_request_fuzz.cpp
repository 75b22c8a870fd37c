// libFuzzer target: `difftx serve`'s request parsers (src/serve/request_parse.h, and the Responses
// and Messages APIs' over them) on any bytes as a body of every endpoint. Only difftx::Error
// (ApiError, a 4xx) may come out; see safetensors_fuzz.cpp.
#include <cstdint>

#include "core/error.h"
#include "fuzz_input.h"
#include "serve/openai_response.h"
#include "serve/messages_request.h"
#include "serve/request_parse.h"
#include "serve/responses_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace difftx::serve;
  ServeLimits limits;
  limits.model_name = "fuzz";
  limits.vocab_size = 1000;
  limits.context = 128;
  nlohmann::json body;
  try {
    body = parse_body(difftx::fuzz::as_text(data, size));
  } catch (const difftx::Error&) {
    return 0;
  }
  const auto attempt = [](auto&& parse) {
    try {
      parse();
    } catch (const difftx::Error&) {
    }
  };
  const nlohmann::ordered_json ordered = parse_ordered_body(difftx::fuzz::as_text(data, size));
  attempt([&] { (void)parse_completion_request(body, ordered, limits); });
  attempt([&] {
    (void)parse_chat_request(body, ordered, limits)
        .messages.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  });
  // The Responses API with and without a stored conversation before the input (the body's own
  // input as that history too: any items a client once sent).
  const bool stores = size % 2 == 0;
  attempt([&] { (void)parse_responses_request(body, ordered, limits, nlohmann::ordered_json::array(), stores); });
  attempt([&] {
    const auto input = ordered.is_object() ? ordered.find("input") : ordered.end();
    if (input != ordered.end() && input->is_array()) (void)parse_responses_request(body, ordered, limits, *input, stores);
  });
  attempt([&] { (void)parse_messages_request(body, ordered, limits); });
  attempt([&] { (void)parse_messages_request(body, ordered, limits, /*counting=*/true); });
  attempt([&] { (void)parse_tokenize_request(body); });
  attempt([&] { (void)parse_detokenize_request(body, limits.vocab_size); });
  attempt([&] { (void)parse_apply_template_request(body, ordered); });
  return 0;
}
