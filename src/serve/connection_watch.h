// A watch over the server's connections. cpp-httplib 0.11 (Debian 12's) bounds each read of a
// request by the read timeout, not the request: a client that sent a byte a second held a worker
// for as long as it liked, and max_connections such clients held the whole server. Here a
// request must arrive whole (header and body) within a deadline from the moment a worker takes
// its connection, or from the end of the connection's previous answer; a connection past it is
// shut down, and so is one that sends more than a request may hold (the body limit and 1 MiB of
// header: httplib keeps every header line, however many, so a flood of them grew the server's
// memory without end, before any API key was checked). At the server's end every connection
// still open is shut down too, so that no client holds the exit. httplib hands its workers sockets, not their handlers: the watch finds each new
// connection's socket by its two ends as the listener queues it (new_pool's workers).
#pragma once
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <httplib.h>

namespace difftx::serve {

class ConnectionWatch {
 public:
  // port: the server's; request_seconds: what a client has to send a request; body_bytes: the
  // largest body a request may have.
  ConnectionWatch(int port, double request_seconds, size_t body_bytes);
  ~ConnectionWatch();
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;

  // For httplib::Server::new_task_queue: a pool of `workers` threads whose connections are watched.
  httplib::TaskQueue* new_pool(size_t workers);

  // On the worker thread of a request: it has been read (its handler runs now, unbounded here:
  // a streamed answer has the write timeout), then answered (the next request's time starts).
  static void request_read();
  static void request_answered();
  // Once the worker thread's answer has gone out, its connection ends, what the client still sends
  // read and dropped for a while: for a request whose body is left unread, or cannot be told from
  // the next request.
  static void close_after_answer();
  // The socket of the connection the calling worker thread serves; -1 where none is known.
  static int current_socket();

  // From now on every connection, open or new, is shut down (a worker blocked on one returns).
  void close_connections();

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    std::string ends;            // both addresses and ports: which connection the number holds
    Clock::time_point deadline;  // max(): none (waiting for a worker, or in its handler)
    uint64_t received = 0;       // the socket's bytes received when its request's time started
    bool shut = false;
  };
  class Pool;
  static thread_local std::pair<ConnectionWatch*, int> current_;  // the worker's watch and socket
  static thread_local bool close_after_answer_;

  int admit();                                  // the socket just accepted; -1: not found
  void serve(int fd, const std::function<void()>& task);
  void shut(int fd, Connection& c);             // with mutex_ held
  void start_request();                         // the current connection's deadline and bytes
  void set_deadline(Clock::time_point deadline);  // the current connection's
  void watch();

  const int port_;
  const Clock::duration request_time_;
  const uint64_t request_bytes_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<int, Connection> open_;  // by socket
  bool closing_ = false, stopping_ = false;
  std::thread watcher_;
};

}  // namespace difftx::serve
