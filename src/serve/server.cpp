#include "serve/server.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <regex>
#include <set>
#include <thread>

#include "serve/auth.h"
#include "serve/choice_run.h"
#include "serve/conversations.h"
#include "serve/generation_route.h"
#include "serve/request_framing.h"
#include "serve/route_util.h"
#include "serve/routes.h"
#include "serve/stored_responses.h"
#include "serve/connection_watch.h"

namespace difftx::serve {

RequestRecord& current_record() {
  thread_local RequestRecord record;
  return record;
}

namespace {

using Handler = void (*)(ServerState&, const httplib::Request&, httplib::Response&);

constexpr int kKeepAliveSeconds = 3;  // how long a connection may wait idle for its next request

struct Route {
  const char* method;
  const char* path;
  Handler handler;
};

const Route kRoutes[] = {
    {"GET", "/", handle_page},
    {"GET", "/health", handle_health},
    {"GET", "/v1/models", handle_models},
    {"GET", "/v1/models/(.+)", handle_model},
    {"POST", "/v1/completions", handle_completions},
    {"POST", "/v1/chat/completions", handle_chat_completions},
    {"POST", "/v1/responses", handle_responses},
    {"POST", "/v1/messages", handle_messages},
    {"POST", "/v1/messages/count_tokens", handle_count_tokens},
    {"GET", "/v1/responses/([^/]+)", handle_response_get},
    {"GET", "/v1/responses/([^/]+)/input_items", handle_response_input_items},
    {"DELETE", "/v1/responses/([^/]+)", handle_response_delete},
    {"POST", "/v1/responses/([^/]+)/cancel", handle_response_cancel},
    {"POST", "/v1/conversations", handle_conversation_create},
    {"GET", "/v1/conversations/([^/]+)", handle_conversation_get},
    {"POST", "/v1/conversations/([^/]+)", handle_conversation_update},
    {"DELETE", "/v1/conversations/([^/]+)", handle_conversation_delete},
    {"POST", "/v1/conversations/([^/]+)/items", handle_conversation_items_add},
    {"GET", "/v1/conversations/([^/]+)/items", handle_conversation_items_list},
    {"GET", "/v1/conversations/([^/]+)/items/([^/]+)", handle_conversation_item_get},
    {"DELETE", "/v1/conversations/([^/]+)/items/([^/]+)", handle_conversation_item_delete},
    {"POST", "/tokenize", handle_tokenize},
    {"POST", "/detokenize", handle_detokenize},
    {"POST", "/apply-template", handle_apply_template},
    {"GET", "/metrics", handle_metrics},
};

bool known_path(const std::string& path) {
  for (const Route& r : kRoutes)
    if (path == r.path) return true;
  return false;
}

// kRoutes[i]'s path pattern, matched against a whole path as httplib matches it.
const std::regex& route_pattern(size_t i) {
  static const std::vector<std::regex> patterns = [] {
    std::vector<std::regex> p;
    for (const Route& r : kRoutes) p.emplace_back(r.path);
    return p;
  }();
  return patterns[i];
}

// The methods the routes take on this path; empty where no route has it.
std::string allowed_methods(const std::string& path) {
  std::string allow;
  for (size_t i = 0; i < std::size(kRoutes); ++i)
    if (std::regex_match(path, route_pattern(i))) allow += (allow.empty() ? "" : ", ") + std::string(kRoutes[i].method);
  return allow;
}

// Whether a route takes the request (HEAD as GET; OPTIONS everywhere: the CORS preflight).
bool routed(const httplib::Request& req) {
  if (req.method == "OPTIONS") return true;
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  for (size_t i = 0; i < std::size(kRoutes); ++i)
    if (method == kRoutes[i].method && std::regex_match(req.path, route_pattern(i))) return true;
  return false;
}

// A 405 naming the methods the path takes, or a 404 for a path no route has.
void answer_unrouted(const httplib::Request& req, httplib::Response& res) {
  const ErrorShape shape = error_shape(req.path);
  const std::string allow = allowed_methods(req.path);
  if (allow.empty())
    return send_error(res, ApiError(404, "no route " + req.method + " " + req.path, "", "not_found"), shape);
  res.set_header("Allow", allow);
  send_error(res, ApiError(405, req.method + " is not allowed on " + req.path + " (allowed: " + allow + ")", "",
                           "method_not_allowed"), shape);
}

// Request-scoped bookkeeping on the worker thread: set as a request arrives, logged as it ends.
thread_local bool request_open = false;
thread_local Clock::time_point request_start;

void open_request(ServerState& state, const httplib::Request& req) {
  RequestRecord& r = current_record();
  r = RequestRecord{};
  r.method = req.method;
  r.path = req.path;
  r.remote = req.remote_addr;
  request_start = Clock::now();
  request_open = true;
  ++state.in_flight;
}

void close_request(ServerState& state, const httplib::Request& req, const httplib::Response& res) {
  RequestRecord& r = current_record();
  if (!request_open) {  // refused before routing (a malformed request line)
    r = RequestRecord{};
    r.method = req.method;
    r.path = req.path;
    r.remote = req.remote_addr;
  }
  if (r.status == 0) r.status = r.stream_open ? 499 : res.status;  // 499: nginx's "client closed request"
  r.seconds = request_open ? std::chrono::duration<double>(Clock::now() - request_start).count() : 0;
  state.metrics.count_request(known_path(req.path) ? req.path : "other", r.status);
  const std::string line = format_request_log(r, state.options.log_format) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  if (request_open) --state.in_flight;
  request_open = false;
}

ApiError body_too_large() {
  return ApiError(413, "the request body is larger than the server's limit (--max-body-bytes)", "", "request_too_large");
}

void configure(httplib::Server& http, ServerState& state) {
  const ServerOptions& o = state.options;
  http.set_payload_max_length(o.max_body_bytes);
  http.set_read_timeout(o.read_timeout_s, 0);
  http.set_write_timeout(o.write_timeout_s, 0);
  http.set_tcp_nodelay(true);  // stream chunks are small: send each at once
  http.set_keep_alive_timeout(kKeepAliveSeconds);
  http.set_keep_alive_max_count(1000);
  // CORS, as llama-server and vLLM answer by default: a browser page of any origin may call the
  // API (with the API key where one is set); its preflights are answered before authentication.
  http.set_default_headers({{"Access-Control-Allow-Origin", "*"}});
  http.Options(R"(.*)", [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
    const std::string asked = req.get_header_value("Access-Control-Request-Headers");
    res.set_header("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked);
    res.set_header("Access-Control-Max-Age", "86400");
    res.status = 204;
  });
  for (const Route& route : kRoutes) {
    const Handler handler = route.handler;
    auto wrapped = [&state, handler](const httplib::Request& req, httplib::Response& res) {
      ConnectionWatch::request_read();
      handler(state, req, res);
    };
    const std::string method = route.method;
    if (method == "GET") http.Get(route.path, wrapped);
    else if (method == "DELETE") http.Delete(route.path, wrapped);
    else http.Post(route.path, [&state, handler](const httplib::Request& req, httplib::Response& res,
                                                 const httplib::ContentReader& read) {
      // The body is read here, counted as it comes: httplib's limit holds only for a declared
      // Content-Length, and read a chunked body, or one sent until the client closes, whole.
      httplib::Request with_body = req;
      const size_t limit = state.options.max_body_bytes;
      bool too_large = false;
      if (has_body(req))  // else the body is empty: bytes after the headers are the next request
        read([&](const char* data, size_t n) {
          too_large = n > limit - std::min(limit, with_body.body.size());
          if (!too_large) with_body.body.append(data, n);
          return !too_large;
        });
      ConnectionWatch::request_read();
      if (too_large) {  // the rest of the body is never read: the connection ends after the answer
        res.set_header("Connection", "close");
        ConnectionWatch::close_after_answer();
        send_error(res, body_too_large(), error_shape(req.path));
        return;
      }
      if (res.status == 413) return;  // a declared Content-Length over the limit: the error handler answers
      handler(state, with_body, res);
    });
  }
  // Before routing: the log record, the body's framing, shutting down, authentication, no route.
  http.set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    open_request(state, req);
    const ErrorShape shape = error_shape(req.path);
    // Answered here, before any body is read: the connection ends after the answer where the
    // request has one (or its end is unknown), else its bytes would be read as the next request.
    const auto answered = [&res](bool body) {
      if (body) {
        res.set_header("Connection", "close");
        ConnectionWatch::close_after_answer();
      }
      return httplib::Server::HandlerResponse::Handled;
    };
    if (const std::optional<ApiError> e = framing_error(req)) {
      send_error(res, *e, shape);
      return answered(true);
    }
    if (state.draining && req.path != "/health") {
      send_error(res, ApiError(503, "the server is shutting down", "", "shutting_down"), shape);
      return answered(has_body(req));
    }
    const std::string& key = state.options.api_key;
    if (!key.empty() && req.method != "OPTIONS" && req.path != "/health" && req.path != "/" &&
        !bearer_matches(req.get_header_value("Authorization"), key) &&
        !(req.has_header("x-api-key") && constant_time_equal(req.get_header_value("x-api-key"), key))) {
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res,
                 ApiError(401, "a valid API key is required: send 'Authorization: Bearer KEY' or 'x-api-key: KEY'",
                          "", "invalid_api_key"),
                 shape);
      return answered(has_body(req));
    }
    if (!routed(req)) {  // before httplib reads its body (to the client's close, where it has no length)
      answer_unrouted(req, res);
      return answered(has_body(req));
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Statuses httplib sets itself (no route, body too large, unreadable request) get a JSON body.
  const httplib::Server::HandlerWithResponse on_error = [](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return httplib::Server::HandlerResponse::Unhandled;
    const ErrorShape shape = error_shape(req.path);
    if (res.status == 404) {
      answer_unrouted(req, res);
    } else if (res.status == 413) {
      send_error(res, body_too_large(), shape);
    } else {
      send_error(res, ApiError(res.status, concat("the request could not be read (HTTP ", res.status, ")")), shape);
    }
    return httplib::Server::HandlerResponse::Handled;
  };
  http.set_error_handler(on_error);
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr e) {
    std::string what = "unknown";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
    send_error(res, ApiError(500, "internal error: " + what, "", "internal_error"), error_shape(req.path));
  });
  http.set_logger([&state](const httplib::Request& req, const httplib::Response& res) {
    close_request(state, req, res);
    ConnectionWatch::request_answered();
  });
}

// Waits (up to the grace period) for in-flight requests other than the caller's to end.
void drain(ServerState& state) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(state.options.grace_seconds);
  while (state.in_flight.load() > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

int run_server(const ServerOptions& options, const ModelLoader& load) {
  // Signals are taken by sigwait below, so every thread starts with them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  ServerState state(options);
  state.created = static_cast<int64_t>(std::time(nullptr));
  httplib::Server http;
  configure(http, state);
  int port = options.port;
  if (port == 0) port = http.bind_to_any_port(options.host);
  else if (!http.bind_to_port(options.host, port)) port = -1;
  if (port <= 0) {
    std::fprintf(stderr, "difftx serve: cannot listen on %s:%d\n", options.host.c_str(), options.port);
    return 1;
  }
  // A request's whole header and body within the read timeout, after the keep-alive wait for it.
  ConnectionWatch watch(port, static_cast<double>(options.read_timeout_s + kKeepAliveSeconds), options.max_body_bytes);
  http.new_task_queue = [&watch, workers = static_cast<size_t>(options.max_connections)] {
    return watch.new_pool(workers);
  };
  std::fprintf(stderr, "difftx serve: listening on http://%s:%d\n", options.host.c_str(), port);
  std::thread listener([&] { http.listen_after_bind(); });

  bool load_failed = false;
  std::thread loader([&] {
    try {
      state.model = load();
      state.model->engine->start();
      state.ready.store(true, std::memory_order_release);
      std::fprintf(stderr, "difftx serve: model '%s' ready (context %lld tokens, prefix cache %s)\n",
                   state.model->limits.model_name.c_str(), static_cast<long long>(state.model->limits.context),
                   state.model->engine->stats().prefix_cache);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "difftx serve: error: %s\n", e.what());
      load_failed = true;
      kill(getpid(), SIGTERM);
    }
  });

  int signal = 0;
  sigwait(&signals, &signal);
  loader.join();
  if (!load_failed) std::fprintf(stderr, "difftx serve: %s: finishing in-flight requests\n", strsignal(signal));
  state.draining = true;
  drain(state);
  if (state.ready) state.model->engine->stop();  // cancels what is left; their streams end
  drain(state);
  watch.close_connections();  // a client still sending (or idle) does not hold the exit
  http.stop();
  listener.join();
  return load_failed ? 1 : 0;
}

}  // namespace difftx::serve
