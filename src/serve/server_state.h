// What every route shares: the options, the model once loaded, metrics, and the request being
// served on this thread (for its log line).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "serve/background_responses.h"
#include "serve/conversation_store.h"
#include "serve/metrics.h"
#include "serve/request_log.h"
#include "serve/response_store.h"
#include "serve/served_model.h"

namespace difftx::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (the one taken is printed)
  std::string api_key;               // empty: no authentication
  size_t max_body_bytes = 8 << 20;   // larger bodies: 413
  int max_connections = 128;         // connections served at once (threads); more wait
  int read_timeout_s = 30, write_timeout_s = 30;
  double grace_seconds = 10;         // SIGINT/SIGTERM: how long in-flight requests may finish
  LogFormat log_format = LogFormat::text;
  // The Responses API's stored responses, and as much again for ended background runs' events and
  // for conversations; 0: none of them.
  int64_t responses_store_bytes = int64_t{64} << 20;
};

// Background responses going at once (serve/background_responses.h): each holds a thread.
inline constexpr size_t kMaxBackgroundRuns = 64;

struct ServerState {
  explicit ServerState(const ServerOptions& o)
      : options(o),
        responses(o.responses_store_bytes),
        conversations(o.responses_store_bytes),
        background(o.responses_store_bytes, kMaxBackgroundRuns) {}
  ServerOptions options;
  Metrics metrics;
  ResponseStore responses;
  ConversationStore conversations;     // the Conversations API's, within the same budget again
  std::unique_ptr<ServedModel> model;  // set before `ready`
  std::atomic<bool> ready{false}, draining{false};
  std::atomic<int64_t> in_flight{0};
  int64_t created = 0;  // unix time the server started: the model's "created"
  BackgroundRuns background;  // last: its runners, which use the rest, are joined before it goes
};

// The request this thread is serving (reset as each request arrives; logged as it ends).
RequestRecord& current_record();

}  // namespace difftx::serve
