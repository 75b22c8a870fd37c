// One line per request on stderr: method, path, status, tokens and timings; as text or as one
// JSON object per line.
#pragma once
#include <cstdint>
#include <string>

namespace difftx::serve {

enum class LogFormat { text, json };
LogFormat parse_log_format(const std::string& name);  // "text" | "json"; error naming the choices

struct RequestRecord {
  std::string method, path, remote;
  int status = 0;
  int64_t prompt_tokens = 0, generated_tokens = 0;
  double seconds = 0;             // from the request's arrival to the response's end
  double first_token_seconds = -1;  // time to the first token; < 0: none
  bool stream_open = false;  // a stream began and has not sent its end: if it ends so, the client left (499)
};

std::string format_request_log(const RequestRecord& r, LogFormat format);

}  // namespace difftx::serve
