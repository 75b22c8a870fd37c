// The devices difftx computes on, by name: one registration per backend (docs/ARCHITECTURE.md
// "Backends").
#include <string>

#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "core/error.h"

namespace difftx::backends {

Backend& cpu_backend() { return cpu::level_backend(cpu_level()); }

std::vector<std::string> device_names() { return {"cpu"}; }

Backend& open_backend(const std::string& device) {
  if (device.empty() || device == "cpu") return cpu_backend();
  fail("unknown device '", device.substr(0, 64), "' (devices: cpu)");
}

}  // namespace difftx::backends
