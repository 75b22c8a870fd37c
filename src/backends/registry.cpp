// The backend a device name opens (backend.h open_backend), each opened once and kept for the
// process.
// NOTE (vulkan branch): a stand-in for the lead's registry of issue 34, with the Vulkan entry
// only; the merge takes main's registry and adds the vulkan::names_vulkan / vulkan::open_device
// entry to it.
#include <map>
#include <memory>
#include <mutex>

#include "backends/backend.h"
#include "backends/vulkan/vulkan.h"
#include "core/error.h"

namespace difftx::backends {

Backend& open_backend(const std::string& device) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Backend>> opened;
  std::lock_guard lock(mutex);
  if (auto it = opened.find(device); it != opened.end()) return *it->second;
  DIFFTX_CHECK(vulkan::names_vulkan(device), "unknown device '", device.substr(0, 64),
               "': expected vulkan or vulkan:N (the CPU backend comes with issue 34)");
  return *opened.emplace(device, vulkan::open_device(device)).first->second;
}

}  // namespace difftx::backends
