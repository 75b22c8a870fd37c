// The Vulkan API as difftx calls it: the loader (libvulkan.so.1) is opened at run time, so the
// binary starts on machines without one, and every entry point is loaded by hand
// (VK_NO_PROTOTYPES): the global ones from the loader, the instance's and the device's from
// their handles. One Api per backend (each has its own instance and device).
#pragma once
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan_core.h>

#include <string>

namespace difftx::backends::vulkan {

// clang-format off
#define DIFFTX_VK_GLOBAL(X)                                                                           \
  X(vkCreateInstance) X(vkEnumerateInstanceExtensionProperties) X(vkEnumerateInstanceLayerProperties) \
  X(vkEnumerateInstanceVersion)

#define DIFFTX_VK_INSTANCE(X)                                                                              \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                      \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceMemoryProperties) \
  X(vkGetPhysicalDeviceMemoryProperties2) X(vkGetPhysicalDeviceQueueFamilyProperties)                      \
  X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) X(vkGetDeviceProcAddr)

// Instance extensions: null where the extension is absent.
#define DIFFTX_VK_INSTANCE_OPTIONAL(X)                                 \
  X(vkCreateDebugUtilsMessengerEXT) X(vkDestroyDebugUtilsMessengerEXT) \
  X(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)

#define DIFFTX_VK_DEVICE(X)                                                                                    \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory)                    \
  X(vkInvalidateMappedMemoryRanges) X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreatePipelineCache)  \
  X(vkDestroyPipelineCache) X(vkGetPipelineCacheData) X(vkCreateDescriptorSetLayout)                           \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)                         \
  X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool)        \
  X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool)        \
  X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) X(vkResetCommandBuffer) X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) \
  X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCmdFillBuffer) X(vkQueueSubmit) X(vkCreateFence)              \
  X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences) X(vkDeviceWaitIdle) X(vkCreateQueryPool)               \
  X(vkDestroyQueryPool) X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) X(vkGetQueryPoolResults)

// Device extensions: null where the extension is absent or not enabled.
#define DIFFTX_VK_DEVICE_OPTIONAL(X) \
  X(vkGetPipelineExecutablePropertiesKHR) X(vkGetPipelineExecutableStatisticsKHR)
// clang-format on

struct Api {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define DIFFTX_VK_MEMBER(name) PFN_##name name = nullptr;
  DIFFTX_VK_GLOBAL(DIFFTX_VK_MEMBER)
  DIFFTX_VK_INSTANCE(DIFFTX_VK_MEMBER)
  DIFFTX_VK_INSTANCE_OPTIONAL(DIFFTX_VK_MEMBER)
  DIFFTX_VK_DEVICE(DIFFTX_VK_MEMBER)
  DIFFTX_VK_DEVICE_OPTIONAL(DIFFTX_VK_MEMBER)
#undef DIFFTX_VK_MEMBER

  // The loader's global entry points: libvulkan.so.1 (or the file DIFFTX_VULKAN_LOADER names),
  // opened once per process. Error naming the library and why it did not open.
  static Api global();
  // The same from the loader at `path`, opened on every call (tests).
  static Api load(const std::string& path);
  void load_instance(VkInstance instance);
  void load_device(VkDevice device);
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and the like.
const char* result_name(VkResult result);
// Throws difftx::Error "vulkan: <what>: <result>" unless result is VK_SUCCESS.
void check(VkResult result, const char* what);

}  // namespace difftx::backends::vulkan
