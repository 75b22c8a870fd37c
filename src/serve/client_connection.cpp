#include "serve/client_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "serve/connection_watch.h"

namespace difftx::serve {

ClientConnection::ClientConnection() : fd_(ConnectionWatch::current_socket()) {}

bool ClientConnection::gone() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) return true;
  char c;  // readable: the end of the stream (or a reset), or the client's next request already sent
  const ssize_t got = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace difftx::serve
