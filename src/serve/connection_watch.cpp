#include "serve/connection_watch.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

#include "serve/socket_bytes.h"

namespace difftx::serve {
namespace {

// "addr port" of one end of a socket; empty for no TCP/IP end.
std::string end_of(int fd, bool peer) {
  sockaddr_storage ss{};
  socklen_t n = sizeof ss;
  auto* sa = reinterpret_cast<sockaddr*>(&ss);
  if ((peer ? getpeername(fd, sa, &n) : getsockname(fd, sa, &n)) != 0) return "";
  if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) return "";
  char host[NI_MAXHOST], service[NI_MAXSERV];
  if (getnameinfo(sa, n, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "";
  return std::string(host) + " " + service;
}

// Both ends of a connection to `port` (the local end's port); empty for any other descriptor.
std::string ends_of(int fd, int port) {
  const std::string local = end_of(fd, false);
  if (local.empty() || std::atoi(local.c_str() + local.rfind(' ') + 1) != port) return "";
  const std::string remote = end_of(fd, true);  // none for the listening socket
  return remote.empty() ? "" : local + " " + remote;
}

// Ends a connection whose client may still be sending what will never be read: the answer is
// followed by a FIN, then what arrives is read and dropped (for at most `bytes` or 5 s, until the
// client closes) before the reading side is shut, so that the client, which may write its whole
// body before it reads, gets the answer rather than a reset, and nothing it sent after the answer
// is taken as a request.
void linger_close(int fd, uint64_t bytes) {
  shutdown(fd, SHUT_WR);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  char sink[65536];
  for (uint64_t dropped = 0; dropped <= bytes;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = recv(fd, sink, sizeof sink, 0);
    if (n <= 0) break;
    dropped += static_cast<uint64_t>(n);
  }
  shutdown(fd, SHUT_RD);
}

}  // namespace

thread_local std::pair<ConnectionWatch*, int> ConnectionWatch::current_{nullptr, -1};
thread_local bool ConnectionWatch::close_after_answer_ = false;

class ConnectionWatch::Pool : public httplib::ThreadPool {
 public:
  Pool(ConnectionWatch& watch, size_t workers) : httplib::ThreadPool(workers), watch_(watch) {}
  void enqueue(std::function<void()> task) override {
    const int fd = watch_.admit();
    httplib::ThreadPool::enqueue([this, fd, task = std::move(task)] { watch_.serve(fd, task); });
  }

 private:
  ConnectionWatch& watch_;
};

ConnectionWatch::ConnectionWatch(int port, double request_seconds, size_t body_bytes)
    : port_(port),
      request_time_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(request_seconds))),
      request_bytes_(uint64_t{body_bytes} + (uint64_t{1} << 20)),
      watcher_([this] { watch(); }) {}

ConnectionWatch::~ConnectionWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  watcher_.join();
}

httplib::TaskQueue* ConnectionWatch::new_pool(size_t workers) { return new Pool(*this, workers); }

int ConnectionWatch::admit() {
  // The listener queues each connection as it accepts it, so the socket of the port that is not
  // known yet (or whose number now holds other ends) is the new one; were there several, the
  // newest, whose inode is the largest.
  std::lock_guard lock(mutex_);
  int found = -1;
  unsigned long newest = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(dir)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0') continue;
      const std::string ends = ends_of(static_cast<int>(fd), port_);
      if (ends.empty()) continue;
      const auto it = open_.find(static_cast<int>(fd));
      if (it != open_.end() && it->second.ends == ends) continue;
      struct stat st {};
      if (fstat(static_cast<int>(fd), &st) != 0 || (found >= 0 && st.st_ino <= newest)) continue;
      found = static_cast<int>(fd);
      newest = st.st_ino;
    }
    closedir(dir);
  }
  if (found >= 0) {
    Connection& c = open_[found] = Connection{ends_of(found, port_), Clock::time_point::max()};
    if (closing_) shut(found, c);
  }
  return found;
}

void ConnectionWatch::serve(int fd, const std::function<void()>& task) {
  std::string ends;
  {
    std::lock_guard lock(mutex_);
    if (const auto it = open_.find(fd); it != open_.end()) ends = it->second.ends;
  }
  current_ = {this, fd};
  start_request();
  task();  // httplib closes the socket at its end
  current_ = {nullptr, -1};
  std::lock_guard lock(mutex_);
  // The number may hold a newer connection by now (admitted as this one closed): that one stays.
  if (const auto it = open_.find(fd); it != open_.end() && it->second.ends == ends) open_.erase(it);
}

void ConnectionWatch::start_request() {
  const uint64_t received = socket_bytes_received(current_.second);
  std::lock_guard lock(mutex_);
  if (const auto it = open_.find(current_.second); it != open_.end())
    it->second.deadline = Clock::now() + request_time_, it->second.received = received;
}

void ConnectionWatch::set_deadline(Clock::time_point deadline) {
  std::lock_guard lock(mutex_);
  if (const auto it = open_.find(current_.second); it != open_.end()) it->second.deadline = deadline;
}

void ConnectionWatch::request_read() {
  if (current_.first != nullptr) current_.first->set_deadline(Clock::time_point::max());
}

void ConnectionWatch::request_answered() {
  if (close_after_answer_ && current_.first != nullptr && current_.second >= 0)
    linger_close(current_.second, current_.first->request_bytes_);
  close_after_answer_ = false;
  if (current_.first != nullptr) current_.first->start_request();
}

void ConnectionWatch::close_after_answer() { close_after_answer_ = true; }

int ConnectionWatch::current_socket() { return current_.second; }

void ConnectionWatch::shut(int fd, Connection& c) {
  // Only while the number still holds this connection: httplib may have closed it already.
  if (!c.shut && ends_of(fd, port_) == c.ends) shutdown(fd, SHUT_RDWR);
  c.shut = true;
}

void ConnectionWatch::close_connections() {
  std::lock_guard lock(mutex_);
  closing_ = true;
  for (auto& [fd, c] : open_) shut(fd, c);
}

void ConnectionWatch::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    const Clock::time_point now = Clock::now();
    for (auto& [fd, c] : open_)
      if (c.deadline != Clock::time_point::max() &&
          (now > c.deadline || socket_bytes_received(fd) - c.received > request_bytes_))
        shut(fd, c);
  }
}

}  // namespace difftx::serve
