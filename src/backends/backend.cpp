// DeviceBuffer's ownership and the host-read guard of device addresses (backend.h,
// device_ptr.h).
// NOTE (vulkan branch): a stand-in for the lead's backend.cpp of issue 34, kept to these
// definitions; the merge takes main's.
#include "backends/backend.h"

#include <utility>

#include "core/error.h"

namespace difftx::backends {

void throw_host_read_of_device_memory(uint64_t address) {
  fail("device address 0x", std::hex, address, " is in a device's memory: the host cannot read it (download it)");
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : owner_(std::exchange(o.owner_, nullptr)),
      address_(std::exchange(o.address_, 0)),
      bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(owner_, o.owner_);
  std::swap(address_, o.address_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (owner_ && address_) owner_->release(address_, bytes_);
}

}  // namespace difftx::backends
