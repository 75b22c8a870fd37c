#include "backends/vulkan/vulkan.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "backends/vulkan/vulkan_backend.h"
#include "core/error.h"

namespace difftx::backends::vulkan {

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
  const char* chunk = std::getenv("DIFFTX_VULKAN_DECODE_CHUNK");  // 32, 64 or 128: Capabilities::decode_min_chunk
  const std::string chunk_value = chunk ? chunk : "";
  DIFFTX_CHECK(chunk_value.empty() || chunk_value == "32" || chunk_value == "64" || chunk_value == "128",
               "vulkan: DIFFTX_VULKAN_DECODE_CHUNK must be 32, 64 or 128, got '", chunk_value.substr(0, 64), "'");
  if (!chunk_value.empty()) options.decode_min_chunk = std::stoi(chunk_value);
  const char* slices = std::getenv("DIFFTX_VULKAN_GEMM_SLICES");  // 1, 2 or 4: Capabilities::gemm_max_slices
  const std::string slices_value = slices ? slices : "";
  DIFFTX_CHECK(slices_value.empty() || slices_value == "1" || slices_value == "2" || slices_value == "4",
               "vulkan: DIFFTX_VULKAN_GEMM_SLICES must be 1, 2 or 4, got '", slices_value.substr(0, 64), "'");
  if (!slices_value.empty()) options.gemm_max_slices = std::stoi(slices_value);
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
