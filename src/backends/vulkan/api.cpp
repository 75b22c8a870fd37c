#include "backends/vulkan/api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace difftx::backends::vulkan {
namespace {

void* open_library(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    fail("vulkan: no Vulkan loader (", error ? error : path,
         "); install one with a driver (Debian: libvulkan1 and mesa-vulkan-drivers, or the GPU vendor's)");
  }
  return handle;
}

// The process's loader, opened once and never closed (drivers keep state in it).
void* process_loader() {
  static std::once_flag once;
  static void* handle = nullptr;
  static std::string why;
  std::call_once(once, [] {
    const char* name = std::getenv("DIFFTX_VULKAN_LOADER");
    try {
      handle = open_library(name && *name ? name : "libvulkan.so.1");
    } catch (const Error& e) {
      why = e.what();
    }
  });
  if (!handle) throw Error(why);
  return handle;
}

template <typename Fn>
void load_entry(Fn& slot, PFN_vkVoidFunction fn, const char* name, bool required) {
  slot = reinterpret_cast<Fn>(fn);
  if (!slot && required) fail("vulkan: the loader or driver lacks ", name);
}

Api from_library(void* handle) {
  Api api;
  api.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
  DIFFTX_CHECK(api.vkGetInstanceProcAddr, "vulkan: the loader has no vkGetInstanceProcAddr");
#define DIFFTX_VK_LOAD(name) load_entry(api.name, api.vkGetInstanceProcAddr(nullptr, #name), #name, true);
  DIFFTX_VK_GLOBAL(DIFFTX_VK_LOAD)
#undef DIFFTX_VK_LOAD
  return api;
}

}  // namespace

Api Api::global() { return from_library(process_loader()); }

Api Api::load(const std::string& path) { return from_library(open_library(path)); }

void Api::load_instance(VkInstance instance) {
#define DIFFTX_VK_LOAD(name) load_entry(name, vkGetInstanceProcAddr(instance, #name), #name, true);
  DIFFTX_VK_INSTANCE(DIFFTX_VK_LOAD)
#undef DIFFTX_VK_LOAD
#define DIFFTX_VK_LOAD(name) load_entry(name, vkGetInstanceProcAddr(instance, #name), #name, false);
  DIFFTX_VK_INSTANCE_OPTIONAL(DIFFTX_VK_LOAD)
#undef DIFFTX_VK_LOAD
}

void Api::load_device(VkDevice device) {
#define DIFFTX_VK_LOAD(name) load_entry(name, vkGetDeviceProcAddr(device, #name), #name, true);
  DIFFTX_VK_DEVICE(DIFFTX_VK_LOAD)
#undef DIFFTX_VK_LOAD
#define DIFFTX_VK_LOAD(name) load_entry(name, vkGetDeviceProcAddr(device, #name), #name, false);
  DIFFTX_VK_DEVICE_OPTIONAL(DIFFTX_VK_LOAD)
#undef DIFFTX_VK_LOAD
}

const char* result_name(VkResult result) {
  switch (result) {
#define DIFFTX_VK_RESULT(name) \
  case name: return #name;
    DIFFTX_VK_RESULT(VK_SUCCESS)
    DIFFTX_VK_RESULT(VK_NOT_READY)
    DIFFTX_VK_RESULT(VK_TIMEOUT)
    DIFFTX_VK_RESULT(VK_INCOMPLETE)
    DIFFTX_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    DIFFTX_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    DIFFTX_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    DIFFTX_VK_RESULT(VK_ERROR_DEVICE_LOST)
    DIFFTX_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    DIFFTX_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    DIFFTX_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    DIFFTX_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    DIFFTX_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    DIFFTX_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    DIFFTX_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    DIFFTX_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    DIFFTX_VK_RESULT(VK_ERROR_UNKNOWN)
    DIFFTX_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    DIFFTX_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef DIFFTX_VK_RESULT
    default: return "an unknown VkResult";
  }
}

void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) fail("vulkan: ", what, ": ", result_name(result), " (", static_cast<int>(result), ")");
}

}  // namespace difftx::backends::vulkan
