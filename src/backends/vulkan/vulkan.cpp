#include "backends/vulkan/vulkan.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

#include "backends/vulkan/vulkan_backend.h"
#include "core/error.h"

namespace difftx::backends::vulkan {

namespace {

// A numeric setting of the environment, one of `allowed` ("32", "64", ...), or 0 where unset;
// another value is an error naming the variable.
int64_t env_choice(const char* name, std::initializer_list<std::string_view> allowed) {
  const char* v = std::getenv(name);
  if (!v) return 0;
  const std::string value = v;
  std::string choices;
  for (const std::string_view a : allowed) {
    if (value == a) return std::stoll(value);
    choices += (choices.empty() ? "" : ", ") + std::string(a);
  }
  fail("vulkan: ", name, " must be one of ", choices, ", got '", value.substr(0, 64), "'");
}

}  // namespace

bool names_vulkan(const std::string& device) { return device == "vulkan" || device.rfind("vulkan:", 0) == 0; }

Backend& open_device(const std::string& device) {
  DIFFTX_CHECK(names_vulkan(device), "'", device.substr(0, 64), "' is not a Vulkan device name (vulkan or vulkan:N)");
  int index = -1;
  if (device != "vulkan") {
    const std::string n = device.substr(7);
    DIFFTX_CHECK(!n.empty() && n.size() <= 4 && n.find_first_not_of("0123456789") == std::string::npos, "device '",
                 device.substr(0, 64), "': expected vulkan:N with N a device number (difftx --version lists them)");
    index = std::stoi(n);
  }
  // Kept for the process by device number. Never destroyed: each backend closes itself at exit
  // (VulkanBackend). "vulkan" and "vulkan:N" for the same device give the same backend.
  static std::mutex mutex;
  static auto& opened = *new std::map<int, std::unique_ptr<VulkanBackend>>;
  static int chosen_for_vulkan = -1;  // the device "vulkan" opened, once it has
  std::lock_guard lock(mutex);
  if (index < 0) index = chosen_for_vulkan;
  if (auto it = opened.find(index); it != opened.end()) return *it->second;
  Options options;
  const char* v = std::getenv("DIFFTX_VULKAN_VALIDATION");  // "1", or "sync": its synchronization checks too
  const std::string validation = v ? v : "";
  options.validation = options.report_validation = validation == "1" || validation == "sync";
  options.sync_validation = validation == "sync";
  const char* stats = std::getenv("DIFFTX_VULKAN_PIPELINE_STATS");
  options.pipeline_statistics = stats && std::string(stats) == "1";
  options.decode_min_chunk = env_choice("DIFFTX_VULKAN_DECODE_CHUNK", {"32", "64", "128"});
  options.gemm_max_slices = env_choice("DIFFTX_VULKAN_GEMM_SLICES", {"1", "2", "4"});
  auto backend = std::make_unique<VulkanBackend>(index, options);
  const int chosen = backend->context().index();
  if (index < 0) chosen_for_vulkan = chosen;
  // Already open as vulkan:N when "vulkan" chose it: the new one is closed again.
  return *opened.try_emplace(chosen, std::move(backend)).first->second;
}

std::vector<std::string> device_names() {
  std::string why;
  const size_t count = list_devices(&why).size();
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) names.push_back(concat("vulkan:", i));
  return names;
}

std::vector<std::string> device_listing() {
  std::string why;
  const std::vector<DeviceInfo> devices = list_devices(&why);
  if (devices.empty()) return {"vulkan: no device (" + (why.rfind("vulkan: ", 0) == 0 ? why.substr(8) : why) + ")"};
  std::vector<std::string> lines;
  for (size_t i = 0; i < devices.size(); ++i) {
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(devices[i].memory_bytes) / (1 << 30));
    lines.push_back(concat("vulkan:", i, " ", devices[i].name, ": ", memory, ", ", devices[i].features));
  }
  return lines;
}

}  // namespace difftx::backends::vulkan
