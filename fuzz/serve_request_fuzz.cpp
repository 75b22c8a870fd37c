// libFuzzer target: `difftx serve`'s request parser (src/serve/request_parse.h) on any bytes as
// a body of every endpoint. Only difftx::Error (ApiError, a 4xx) may come out; see
// safetensors_fuzz.cpp.
#include <cstdint>

#include "core/error.h"
#include "fuzz_input.h"
#include "serve/openai_response.h"
#include "serve/request_parse.h"

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
  attempt([&] { (void)parse_tokenize_request(body); });
  attempt([&] { (void)parse_detokenize_request(body, limits.vocab_size); });
  attempt([&] { (void)parse_apply_template_request(body, ordered); });
  return 0;
}
