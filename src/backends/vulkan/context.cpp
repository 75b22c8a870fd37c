#include "backends/vulkan/context.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace difftx::backends::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  return std::any_of(list.begin(), list.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

// Vulkan's two-call enumeration: fn(&count, nullptr), then fn(&count, items).
template <typename T, typename Fn>
std::vector<T> enumerate(const char* what, Fn fn) {
  uint32_t n = 0;
  check(fn(&n, static_cast<T*>(nullptr)), what);
  std::vector<T> items(n);
  check(fn(&n, items.data()), what);
  items.resize(n);
  return items;
}

std::vector<VkExtensionProperties> instance_extensions(const Api& api) {
  return enumerate<VkExtensionProperties>("vkEnumerateInstanceExtensionProperties", [&](uint32_t* n, auto* items) {
    return api.vkEnumerateInstanceExtensionProperties(nullptr, n, items);
  });
}

std::vector<VkExtensionProperties> device_extensions(const Api& api, VkPhysicalDevice device) {
  return enumerate<VkExtensionProperties>("vkEnumerateDeviceExtensionProperties", [&](uint32_t* n, auto* items) {
    return api.vkEnumerateDeviceExtensionProperties(device, nullptr, n, items);
  });
}

bool has_layer(const Api& api, const char* name) {
  const auto layers = enumerate<VkLayerProperties>("vkEnumerateInstanceLayerProperties", [&](uint32_t* n, auto* items) {
    return api.vkEnumerateInstanceLayerProperties(n, items);
  });
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  static_cast<Context*>(user)->add_validation_message(
      concat(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: " : "warning: ",
             data && data->pMessage ? data->pMessage : "(no message)"));
  return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(Context* context) {
  VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  info.pfnUserCallback = on_validation_message;
  info.pUserData = context;
  return info;
}

// An instance with the extensions difftx uses where they are there.
VkInstance create_instance(const Api& api, bool validation, bool sync_validation, Context* context) {
  uint32_t version = VK_API_VERSION_1_1;
  api.vkEnumerateInstanceVersion(&version);
  DIFFTX_CHECK(version >= VK_API_VERSION_1_1, "vulkan: the loader supports Vulkan ",
               VK_API_VERSION_MAJOR(version), ".", VK_API_VERSION_MINOR(version), "; difftx needs 1.1");
  const auto available = instance_extensions(api);
  std::vector<const char*> extensions, layers;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  if (has_extension(available, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {  // MoltenVK
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkDebugUtilsMessengerCreateInfoEXT messages = messenger_info(context);
  const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  if (validation) {
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    info.pNext = &messages;
    if (sync_validation) messages.pNext = &features;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "difftx";
  app.pEngineName = "difftx";
  app.apiVersion = std::min<uint32_t>(version, VK_API_VERSION_1_3);
  info.pApplicationInfo = &app;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult result = api.vkCreateInstance(&info, nullptr, &instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER) fail("vulkan: no Vulkan driver (VK_ERROR_INCOMPATIBLE_DRIVER)");
  check(result, "vkCreateInstance");
  return instance;
}

std::vector<VkPhysicalDevice> physical_devices(const Api& api, VkInstance instance) {
  return enumerate<VkPhysicalDevice>("vkEnumeratePhysicalDevices", [&](uint32_t* n, auto* items) {
    return api.vkEnumeratePhysicalDevices(instance, n, items);
  });
}

bool has_cooperative_matrix_16x16x16(const Api& api, VkPhysicalDevice device) {
  if (!api.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) return false;
  uint32_t n = 0;
  if (api.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(device, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkCooperativeMatrixPropertiesNV> list(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (api.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(device, &n, list.data()) != VK_SUCCESS) return false;
  for (const auto& p : list)
    if (p.MSize == 16 && p.NSize == 16 && p.KSize == 16 && p.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        p.BType == VK_COMPONENT_TYPE_FLOAT16_NV && p.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        p.DType == VK_COMPONENT_TYPE_FLOAT32_NV && p.scope == VK_SCOPE_SUBGROUP_NV)
      return true;
  return false;
}

// Everything difftx reads of a physical device.
struct Probe {
  VkPhysicalDeviceProperties properties{};
  Capabilities caps;
  VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  std::vector<VkExtensionProperties> extensions;
};

Probe probe(const Api& api, VkPhysicalDevice device) {
  Probe p;
  api.vkGetPhysicalDeviceProperties(device, &p.properties);
  Capabilities& c = p.caps;
  c.api_version = p.properties.apiVersion;
  p.extensions = device_extensions(api, device);
  const bool v12 = c.api_version >= VK_API_VERSION_1_2, v13 = c.api_version >= VK_API_VERSION_1_3;
  const bool has_coopmat = has_extension(p.extensions, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (v12) {
    p.features.pNext = &p.features11;
    p.features11.pNext = &p.features12;
    if (has_coopmat) p.features12.pNext = &p.coopmat;
  } else if (has_coopmat) {
    p.features.pNext = &p.coopmat;
  }
  api.vkGetPhysicalDeviceFeatures2(device, &p.features);
  c.float64 = p.features.features.shaderFloat64;
  if (v12) {
    c.float16 = p.features12.shaderFloat16;
    c.int8 = p.features12.shaderInt8;
    c.storage16 = p.features11.storageBuffer16BitAccess;
    c.storage8 = p.features12.storageBuffer8BitAccess;
  }
  c.memory_budget = has_extension(p.extensions, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  props.pNext = &subgroup;
  subgroup.pNext = &m3;
  if (v13) m3.pNext = &m4;
  api.vkGetPhysicalDeviceProperties2(device, &props);
  const VkPhysicalDeviceLimits& limits = p.properties.limits;
  c.subgroup_size = subgroup.subgroupSize;
  // matmul_coopmat.comp tiles its workgroup as eight subgroups of 32, and its SPIR-V declares the
  // Vulkan memory model (glslang's scopes for GL_NV_cooperative_matrix).
  c.cooperative_matrix = has_coopmat && p.coopmat.cooperativeMatrix && c.float16 && c.subgroup_size == 32 &&
                         v12 && p.features12.vulkanMemoryModel && has_cooperative_matrix_16x16x16(api, device);
  c.max_binding_bytes = limits.maxStorageBufferRange;
  c.binding_alignment = static_cast<int64_t>(limits.minStorageBufferOffsetAlignment);
  // maxMemoryAllocationSize is a soft limit (NVIDIA allocates beyond it); maxBufferSize is not.
  c.max_buffer_bytes = v13 ? static_cast<int64_t>(m4.maxBufferSize) : static_cast<int64_t>(m3.maxMemoryAllocationSize);
  c.max_group_count = std::min(limits.maxComputeWorkGroupCount[0], limits.maxComputeWorkGroupCount[1]);
  VkPhysicalDeviceMemoryProperties memory;
  api.vkGetPhysicalDeviceMemoryProperties(device, &memory);
  for (uint32_t h = 0; h < memory.memoryHeapCount; ++h)
    if (memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      c.device_local_bytes = std::max<int64_t>(c.device_local_bytes, static_cast<int64_t>(memory.memoryHeaps[h].size));
  return p;
}

const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

int type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

DeviceInfo describe(const Probe& p) {
  const Capabilities& c = p.caps;
  DeviceInfo info;
  info.name = p.properties.deviceName;
  info.memory_bytes = c.device_local_bytes;
  std::string features = concat(device_type_name(p.properties.deviceType), ", Vulkan ",
                                VK_API_VERSION_MAJOR(c.api_version), ".", VK_API_VERSION_MINOR(c.api_version), ".",
                                VK_API_VERSION_PATCH(c.api_version), ", subgroup ", c.subgroup_size);
  const std::pair<bool, const char*> flags[] = {{c.float16, "fp16"},     {c.int8, "int8"},
                                                {c.storage16, "16-bit storage"}, {c.storage8, "8-bit storage"},
                                                {c.float64, "fp64"},     {c.cooperative_matrix, "cooperative matrix"}};
  for (const auto& [on, name] : flags)
    if (on) features += std::string(", ") + name;
  if (!c.cooperative_matrix) features += ", no cooperative matrix";
  features += concat(", binding ", mib(c.max_binding_bytes), ", alignment ", c.binding_alignment);
  info.features = features;
  return info;
}

}  // namespace

Context::Context(int index, const Options& options) : api_(Api::global()), options_(options) {
  const bool validation = options.validation && has_layer(api_, kValidationLayer);
  instance_ = create_instance(api_, validation, options.sync_validation, this);
  try {
    api_.load_instance(instance_);
    if (validation && api_.vkCreateDebugUtilsMessengerEXT) {
      const auto info = messenger_info(this);
      check(api_.vkCreateDebugUtilsMessengerEXT(instance_, &info, nullptr, &messenger_),
            "vkCreateDebugUtilsMessengerEXT");
    }
    const auto devices = physical_devices(api_, instance_);
    DIFFTX_CHECK(!devices.empty(), "vulkan: no Vulkan device (the loader found no driver that offers one)");
    std::vector<Probe> probes;
    for (VkPhysicalDevice d : devices) probes.push_back(probe(api_, d));
    if (index < 0) {
      index = 0;
      for (int i = 1; i < static_cast<int>(probes.size()); ++i)
        if (type_rank(probes[i].properties.deviceType) < type_rank(probes[index].properties.deviceType)) index = i;
    }
    if (index >= static_cast<int>(devices.size())) {
      std::string names;
      for (size_t i = 0; i < probes.size(); ++i)
        names += concat(i ? ", " : "", "vulkan:", i, " ", probes[i].properties.deviceName);
      fail("vulkan: no device vulkan:", index, "; this machine has ", devices.size(), " (", names, ")");
    }
    Probe& p = probes[index];
    physical_ = devices[index];
    index_ = index;
    properties_ = p.properties;
    caps_ = p.caps;
    if (!options.cooperative_matrix) caps_.cooperative_matrix = false;
    const bool has_statistics = has_extension(p.extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    caps_.pipeline_statistics = options.pipeline_statistics && has_statistics;
    if (options.pipeline_statistics && !has_statistics)
      std::fprintf(stderr, "vulkan: %s reports no pipeline statistics; DIFFTX_VULKAN_PIPELINE_STATS is ignored\n",
                   p.properties.deviceName);
    const char* coopmat = std::getenv("DIFFTX_VULKAN_COOPMAT");
    const std::string coopmat_value = coopmat ? coopmat : "";
    caps_.emulated_cooperative_matrix = options.emulate_cooperative_matrix || coopmat_value == "emulated";
    if (coopmat_value == "0" || caps_.emulated_cooperative_matrix) caps_.cooperative_matrix = false;
    const bool cpu_device = p.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    caps_.shared_value_loads = options.shared_value_loads.value_or(!cpu_device);
    const int64_t min_chunk = options.decode_min_chunk;
    DIFFTX_CHECK(min_chunk == 0 || min_chunk == 32 || min_chunk == 64 || min_chunk == 128,
                 "vulkan: Options::decode_min_chunk must be 0 (the device's), 32, 64 or 128, got ", min_chunk);
    caps_.decode_min_chunk = min_chunk > 0 ? min_chunk : cpu_device ? 128 : 32;
    const int64_t slices = options.gemm_max_slices;
    DIFFTX_CHECK(slices == 0 || slices == 1 || slices == 2 || slices == 4,
                 "vulkan: Options::gemm_max_slices must be 0 (the default, 4), 1, 2 or 4, got ", slices);
    if (slices > 0) caps_.gemm_max_slices = slices;
    // Below 4 KiB a binding would hold under 256 floats after alignment: the windowed ops' steps.
    DIFFTX_CHECK(options.max_binding_bytes == 0 || options.max_binding_bytes >= 4096,
                 "vulkan: Options::max_binding_bytes must be 0 (the device's) or at least 4096, got ",
                 options.max_binding_bytes);
    if (options.max_binding_bytes > 0)
      caps_.max_binding_bytes = std::min(caps_.max_binding_bytes, options.max_binding_bytes);
    info_ = describe(p);
    info_.features += concat(caps_.cooperative_matrix || !p.caps.cooperative_matrix ? "" : " (turned off)",
                             caps_.emulated_cooperative_matrix ? ", cooperative matrix emulated" : "");
    DIFFTX_CHECK(caps_.api_version >= VK_API_VERSION_1_1, "vulkan: device ", info_.name, " supports Vulkan ",
                 VK_API_VERSION_MAJOR(caps_.api_version), ".", VK_API_VERSION_MINOR(caps_.api_version),
                 "; difftx needs 1.1");

    uint32_t families = 0;
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, family.data());
    bool found = false;
    for (uint32_t f = 0; f < families && !found; ++f)
      if (family[f].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        queue_family_ = f;
        timestamp_bits_ = family[f].timestampValidBits;
        found = true;
      }
    DIFFTX_CHECK(found, "vulkan: device ", info_.name, " has no compute queue");

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueFamilyIndex = queue_family_;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    std::vector<const char*> extensions;
    if (caps_.memory_budget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    if (caps_.cooperative_matrix) extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (caps_.pipeline_statistics) extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    if (has_extension(p.extensions, "VK_KHR_portability_subset")) extensions.push_back("VK_KHR_portability_subset");
    // Enable exactly what the kernels may use, of what the device has.
    VkPhysicalDeviceFeatures2 enable{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    enable.features.shaderFloat64 = caps_.float64;
    enable.features.shaderInt64 = p.features.features.shaderInt64;
    // The KV pool's windows (shaders/kv.glsl) are an array of bindings indexed per page.
    DIFFTX_CHECK(p.features.features.shaderStorageBufferArrayDynamicIndexing, "vulkan: device ", info_.name,
                 " cannot index arrays of storage buffers (shaderStorageBufferArrayDynamicIndexing)");
    enable.features.shaderStorageBufferArrayDynamicIndexing = VK_TRUE;
    VkPhysicalDeviceVulkan11Features enable11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV enable_coopmat{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR enable_statistics{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    enable_statistics.pipelineExecutableInfo = VK_TRUE;
    void** tail = &enable.pNext;
    if (caps_.pipeline_statistics) {
      *tail = &enable_statistics;
      tail = &enable_statistics.pNext;
    }
    if (caps_.api_version >= VK_API_VERSION_1_2) {
      enable11.storageBuffer16BitAccess = caps_.storage16;
      enable12.shaderFloat16 = caps_.float16;
      enable12.shaderInt8 = caps_.int8;
      enable12.storageBuffer8BitAccess = caps_.storage8;
      *tail = &enable11;
      enable11.pNext = &enable12;
      tail = &enable12.pNext;
    }
    if (caps_.cooperative_matrix) {
      enable12.vulkanMemoryModel = VK_TRUE;  // in the chain: cooperative matrices imply Vulkan 1.2
      enable_coopmat.cooperativeMatrix = VK_TRUE;
      *tail = &enable_coopmat;
    }
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &enable;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    check(api_.vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice");
    api_.load_device(device_);
    api_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  } catch (...) {
    close();
    throw;
  }
}

Context::~Context() { close(); }

void Context::close(bool abandon) {
  if (closed_.exchange(true)) return;
  if (device_ && !abandon) {
    api_.vkDeviceWaitIdle(device_);
    api_.vkDestroyDevice(device_, nullptr);
    device_ = VK_NULL_HANDLE;
  }
  if (messenger_) {  // also when abandoned: no callback into this object after it is gone
    api_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
    messenger_ = VK_NULL_HANDLE;
  }
  if (instance_ && !abandon) {
    api_.vkDestroyInstance(instance_, nullptr);
    instance_ = VK_NULL_HANDLE;
  }
}

void Context::check_open() const {
  DIFFTX_CHECK(!closed_, "vulkan: ", info_.name, " was closed (the process is exiting)");
}

double Context::timestamp_ns(uint64_t from, uint64_t to) const {
  const uint64_t mask = timestamp_bits_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << timestamp_bits_) - 1;
  return static_cast<double>((to - from) & mask) * properties_.limits.timestampPeriod;
}

std::vector<std::string> Context::validation_messages() const {
  std::lock_guard lock(messages_mutex_);
  return messages_;
}

void Context::add_validation_message(std::string message) {
  std::lock_guard lock(messages_mutex_);
  if (options_.report_validation) std::fprintf(stderr, "difftx: vulkan validation %s\n", message.c_str());
  messages_.push_back(std::move(message));
}

std::vector<DeviceInfo> list_devices(std::string* why) {
  std::vector<DeviceInfo> list;
  try {
    Api api = Api::global();
    VkInstance instance = create_instance(api, false, false, nullptr);
    try {
      api.load_instance(instance);
      for (VkPhysicalDevice d : physical_devices(api, instance)) list.push_back(describe(probe(api, d)));
    } catch (...) {
      api.vkDestroyInstance(instance, nullptr);
      throw;
    }
    api.vkDestroyInstance(instance, nullptr);
    if (list.empty() && why) *why = "vulkan: no Vulkan device (the loader found no driver that offers one)";
  } catch (const Error& e) {
    if (why) *why = e.what();
    list.clear();
  }
  return list;
}

}  // namespace difftx::backends::vulkan
