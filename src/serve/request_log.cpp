#include "serve/request_log.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "serve/openai_response.h"

namespace difftx::serve {

LogFormat parse_log_format(const std::string& name) {
  if (name == "text") return LogFormat::text;
  if (name == "json") return LogFormat::json;
  fail("--log-format: expected text or json, not '", name, "'");
}

namespace {

// Control characters (a newline in a path) shown escaped, so that one request is one line.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string format_request_log(const RequestRecord& r, LogFormat format) {
  if (format == LogFormat::json) {
    nlohmann::json line = {{"method", r.method},
                           {"path", r.path},
                           {"remote", r.remote},
                           {"status", r.status},
                           {"prompt_tokens", r.prompt_tokens},
                           {"generated_tokens", r.generated_tokens},
                           {"ms", r.seconds * 1e3}};
    if (r.first_token_seconds >= 0) line["ttft_ms"] = r.first_token_seconds * 1e3;
    return dump_json(line);
  }
  char timing[96];
  std::snprintf(timing, sizeof timing, "%.1f ms", r.seconds * 1e3);
  std::string line = concat(printable(r.method), " ", printable(r.path), " ", r.status, " | prompt ", r.prompt_tokens, " generated ",
                            r.generated_tokens, " | ", timing);
  if (r.first_token_seconds >= 0) {
    std::snprintf(timing, sizeof timing, " (first token %.1f ms)", r.first_token_seconds * 1e3);
    line += timing;
  }
  return line + " | " + printable(r.remote);
}

}  // namespace difftx::serve
