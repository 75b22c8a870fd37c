#include "serve/client_connection.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

#include <httplib.h>

namespace difftx::serve {
namespace {

// The numeric address and port of one end of a socket, as cpp-httplib writes them into a request.
bool end_of(int fd, bool peer, std::string& addr, int& port) {
  sockaddr_storage ss{};
  socklen_t n = sizeof ss;
  auto* sa = reinterpret_cast<sockaddr*>(&ss);
  if ((peer ? getpeername(fd, sa, &n) : getsockname(fd, sa, &n)) != 0) return false;
  if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) return false;
  char host[NI_MAXHOST], service[NI_MAXSERV];
  if (getnameinfo(sa, n, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  addr = host;
  port = std::atoi(service);
  return true;
}

}  // namespace

ClientConnection::ClientConnection(const httplib::Request& req)
    : remote_addr_(req.remote_addr), local_addr_(req.local_addr), remote_port_(req.remote_port),
      local_port_(req.local_port) {}

bool ClientConnection::gone() {
  if (!searched_) {
    searched_ = true;
    if (DIR* dir = opendir("/proc/self/fd")) {
      while (const dirent* e = readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0') continue;
        std::string addr;
        int port = -1;
        if (!end_of(static_cast<int>(fd), true, addr, port) || port != remote_port_ || addr != remote_addr_) continue;
        if (!end_of(static_cast<int>(fd), false, addr, port) || port != local_port_ || addr != local_addr_) continue;
        fd_ = static_cast<int>(fd);
        break;
      }
      closedir(dir);
    }
  }
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) return true;
  char c;  // readable: the end of the stream (or a reset), or the client's next request already sent
  const ssize_t got = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace difftx::serve
