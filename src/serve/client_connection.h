// Whether the client of a request being answered has gone away, for a handler that answers only
// when its whole reply is ready (a non-streamed completion): cpp-httplib 0.11 (Debian 12's) tells
// such a handler nothing of its connection. The worker thread holds the request's socket while
// the handler runs, so it is found among the process's sockets by its two ends, and peeked.
#pragma once
#include <string>

namespace httplib {
struct Request;
}

namespace difftx::serve {

class ClientConnection {
 public:
  explicit ClientConnection(const httplib::Request& req);
  // True once the client has closed or reset the connection; false while it is open, and where
  // its socket is not found.
  bool gone();

 private:
  std::string remote_addr_, local_addr_;
  int remote_port_ = -1, local_port_ = -1;
  bool searched_ = false;
  int fd_ = -1;
};

}  // namespace difftx::serve
