// The bytes a TCP socket has received so far, by the kernel's count (what has been read from it
// and what waits to be read); 0 where the kernel does not say. Its own file: Linux's tcp_info
// with that count (linux/tcp.h) and glibc's older one, which cpp-httplib's header brings, clash.
#pragma once
#include <cstdint>

namespace difftx::serve {

uint64_t socket_bytes_received(int fd);

}  // namespace difftx::serve
