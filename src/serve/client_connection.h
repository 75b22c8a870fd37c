// Whether the client of a request being answered has gone away, for a handler that answers only
// when its whole reply is ready (a non-streamed completion): cpp-httplib 0.11 (Debian 12's) tells
// such a handler nothing of its connection, so its socket (ConnectionWatch's, of the worker thread
// that runs the handler) is peeked.
#pragma once

namespace difftx::serve {

class ClientConnection {
 public:
  ClientConnection();  // the calling worker thread's connection
  // True once the client has closed or reset the connection; false while it is open, and off a
  // worker thread.
  bool gone() const;

 private:
  int fd_;
};

}  // namespace difftx::serve
