// The devices difftx computes on, by name: one registration per backend (docs/ARCHITECTURE.md
// "Backends"). Each backend keeps its devices open for the process.
#include <string>

#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/vulkan/vulkan.h"
#include "core/error.h"

namespace difftx::backends {

Backend& cpu_backend() { return cpu::level_backend(cpu_level()); }

std::vector<std::string> device_names() {
  std::vector<std::string> names = {"cpu"};
  for (std::string& name : vulkan::device_names()) names.push_back(std::move(name));
  return names;
}

Backend& open_backend(const std::string& device) {
  if (device == "cpu") return cpu_backend();
  DIFFTX_CHECK(vulkan::names_vulkan(device), "unknown device '", device.substr(0, 64),
               "' (devices: cpu, vulkan, vulkan:N; difftx --version lists this machine's)");
  return vulkan::open_device(device);
}

}  // namespace difftx::backends
