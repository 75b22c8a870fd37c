#include "backends/device_ptr.h"

#include "core/error.h"

namespace difftx::backends {

void throw_host_read_of_device_memory(uint64_t address) {
  fail("device memory (address 0x", std::hex, address, ") read on the host: this needs the CPU backend or a download");
}

}  // namespace difftx::backends
