#include "serve/socket_bytes.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace difftx::serve {

uint64_t socket_bytes_received(int fd) {
  tcp_info info{};
  socklen_t n = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &n) != 0 ||
      n < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received)
    return 0;
  return info.tcpi_bytes_received;
}

}  // namespace difftx::serve
