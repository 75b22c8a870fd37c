// The devices difftx computes on, by name: one registration per backend (docs/ARCHITECTURE.md
// "Backends"). A device's backend is opened once and kept for the process.
#include <map>
#include <memory>
#include <mutex>
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
  if (device.empty() || device == "cpu") return cpu_backend();
  DIFFTX_CHECK(vulkan::names_vulkan(device), "unknown device '", device.substr(0, 64),
               "' (devices: cpu, vulkan, vulkan:N; difftx --version lists this machine's)");
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Backend>> opened;
  std::lock_guard lock(mutex);
  if (auto it = opened.find(device); it != opened.end()) return *it->second;
  return *opened.emplace(device, vulkan::open_device(device)).first->second;
}

}  // namespace difftx::backends
