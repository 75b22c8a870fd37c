// Device memory for a result that the host wants in its own memory: on a backend whose memory is
// the host's, the host memory itself (no copy); elsewhere a device buffer that land() downloads.
#pragma once
#include <cstdint>

#include "backends/backend.h"

namespace difftx::backends {

class HostResult {
 public:
  HostResult(Backend& backend, void* host, int64_t bytes)
      : backend_(backend), host_(host), bytes_(bytes), buffer_(backend.host_memory() ? DeviceBuffer{} : backend.allocate(bytes, false)) {}

  template <typename T>
  DevicePtr<T> as() const {
    return buffer_ ? buffer_.as<T>() : DevicePtr<T>(static_cast<T*>(host_));
  }
  // The result into the host's memory (waits for the ops that write it).
  void land() {
    if (buffer_) backend_.download(host_, buffer_.as<const void>(), bytes_);
  }

 private:
  Backend& backend_;
  void* host_;
  int64_t bytes_;
  DeviceBuffer buffer_;
};

}  // namespace difftx::backends
