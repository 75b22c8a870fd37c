#include "backends/vulkan/memory.h"

#include <algorithm>

#include "backends/device_ptr.h"
#include "core/error.h"

namespace difftx::backends::vulkan {
namespace {

std::string gib(int64_t bytes) { return concat(bytes, " bytes (", static_cast<double>(bytes) / (1 << 30), " GiB)"); }

}  // namespace

Memory::Memory(Context& context) : context_(context), api_(context.api()) {
  api_.vkGetPhysicalDeviceMemoryProperties(context.physical(), &properties_);
}

Memory::~Memory() { close(); }

void Memory::close() {
  if (context_.closed()) return;
  std::lock_guard lock(mutex_);
  for (auto& [id, a] : allocations_) {
    api_.vkDestroyBuffer(context_.device(), a.buffer, nullptr);
    api_.vkFreeMemory(context_.device(), a.memory, nullptr);
  }
  allocations_.clear();
  used_ = 0;
}

uint32_t Memory::memory_type(uint32_t allowed, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const {
  for (uint32_t i = 0; i < properties_.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = properties_.memoryTypes[i].propertyFlags;
    if ((allowed & (1u << i)) && (flags & want) == want && !(flags & avoid)) return i;
  }
  return UINT32_MAX;
}

VkBuffer Memory::create_buffer(int64_t bytes, VkMemoryRequirements* requirements) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = static_cast<VkDeviceSize>(bytes);
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  const VkResult result = api_.vkCreateBuffer(context_.device(), &info, nullptr, &buffer);
  if (result != VK_SUCCESS)
    fail("vulkan: vkCreateBuffer of ", gib(bytes), " on ", context_.info().name, ": ", result_name(result), " (",
         static_cast<int>(result), ")");
  api_.vkGetBufferMemoryRequirements(context_.device(), buffer, requirements);
  return buffer;
}

int64_t Memory::used_bytes() const {
  std::lock_guard lock(mutex_);
  return used_;
}

int64_t Memory::free_bytes() const {
  const int64_t total = context_.caps().device_local_bytes;
  if (!context_.caps().memory_budget) return std::max<int64_t>(0, total - used_bytes());
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  props.pNext = &budget;
  api_.vkGetPhysicalDeviceMemoryProperties2(context_.physical(), &props);
  int64_t best = 0;
  for (uint32_t h = 0; h < props.memoryProperties.memoryHeapCount; ++h)
    if (props.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      best = std::max<int64_t>(best,
                               static_cast<int64_t>(budget.heapBudget[h]) - static_cast<int64_t>(budget.heapUsage[h]));
  return std::max<int64_t>(0, best);
}

uint64_t Memory::allocate(int64_t bytes) {
  DIFFTX_CHECK(bytes > 0, "vulkan: allocation of ", bytes, " bytes: must be > 0");
  context_.check_open();
  const Capabilities& caps = context_.caps();
  const std::string device = context_.info().name;
  const int64_t most = std::min<int64_t>(caps.max_buffer_bytes > 0 ? caps.max_buffer_bytes : INT64_MAX, kOffsetMask);
  const int64_t size = bytes > most ? bytes : (bytes + 255) / 256 * 256;  // whole 256 bytes, never past int64
  if (size > most)
    fail("vulkan: cannot allocate ", gib(bytes), " on ", device, ": one buffer holds at most ", gib(most));
  VkMemoryRequirements req;
  VkBuffer buffer = create_buffer(size, &req);
  uint32_t type = memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  if (type == UINT32_MAX) type = memory_type(req.memoryTypeBits, 0, 0);
  const int64_t heap = static_cast<int64_t>(properties_.memoryHeaps[properties_.memoryTypes[type].heapIndex].size);
  const auto out_of_memory = [&](const char* why) {
    fail("vulkan: out of memory on ", device, ": asked for ", gib(bytes), ", ", gib(free_bytes()), " free of ",
         gib(heap), " (", why, ")");
  };
  if (static_cast<int64_t>(req.size) > heap) {  // no driver call for what cannot fit (and no validation error)
    api_.vkDestroyBuffer(context_.device(), buffer, nullptr);
    out_of_memory("more than the memory heap");
  }
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = req.size;
  info.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult result = api_.vkAllocateMemory(context_.device(), &info, nullptr, &memory);
  if (result != VK_SUCCESS) {
    api_.vkDestroyBuffer(context_.device(), buffer, nullptr);
    if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
      out_of_memory(result_name(result));
    check(result, "vkAllocateMemory");
  }
  const VkResult bound = api_.vkBindBufferMemory(context_.device(), buffer, memory, 0);
  if (bound != VK_SUCCESS) {
    api_.vkDestroyBuffer(context_.device(), buffer, nullptr);
    api_.vkFreeMemory(context_.device(), memory, nullptr);
    check(bound, "vkBindBufferMemory");
  }
  std::lock_guard lock(mutex_);
  for (uint64_t tries = 0; allocations_.count(next_id_); ++tries) {  // ids wrap; a live one is skipped
    DIFFTX_CHECK(tries < kMaxAllocationId, "vulkan: more than ", kMaxAllocationId, " allocations at once");
    next_id_ = next_id_ % kMaxAllocationId + 1;
  }
  const uint64_t id = next_id_;
  next_id_ = next_id_ % kMaxAllocationId + 1;
  allocations_[id] = {buffer, memory, size};
  used_ += size;
  return kDeviceAddressTag | (id << kOffsetBits);
}

void Memory::release(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find((address & ~kDeviceAddressTag) >> kOffsetBits);
  if (it == allocations_.end()) return;
  api_.vkDestroyBuffer(context_.device(), it->second.buffer, nullptr);
  api_.vkFreeMemory(context_.device(), it->second.memory, nullptr);
  used_ -= it->second.bytes;
  allocations_.erase(it);
}

Resolved Memory::resolve(uint64_t address, int64_t bytes, const char* what) const {
  DIFFTX_CHECK(address & kDeviceAddressTag, "vulkan: ", what, ": address 0x", std::hex, address,
               " is not this device's memory (a host pointer, or null)");
  const uint64_t id = (address & ~kDeviceAddressTag) >> kOffsetBits;
  const int64_t offset = static_cast<int64_t>(address & kOffsetMask);
  context_.check_open();
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(id);
  DIFFTX_CHECK(it != allocations_.end(), "vulkan: ", what, ": address 0x", std::hex, address,
               " names no live allocation (freed, or another backend's)");
  DIFFTX_CHECK(bytes >= 0 && offset + bytes <= it->second.bytes, "vulkan: ", what, ": bytes [", offset, ", ",
               offset + bytes, ") lie outside its allocation of ", it->second.bytes, " bytes");
  return {it->second.buffer, offset, it->second.bytes};
}

Memory::HostBuffer Memory::allocate_host(int64_t bytes, bool readback) {
  HostBuffer h;
  VkMemoryRequirements req;
  h.buffer = create_buffer(bytes, &req);
  const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  uint32_t type = readback ? memory_type(req.memoryTypeBits, visible | coherent | cached, 0) : UINT32_MAX;
  if (type == UINT32_MAX && readback) type = memory_type(req.memoryTypeBits, visible | cached, 0);
  if (type == UINT32_MAX) type = memory_type(req.memoryTypeBits, visible | coherent, 0);
  if (type == UINT32_MAX) {
    api_.vkDestroyBuffer(context_.device(), h.buffer, nullptr);
    fail("vulkan: ", context_.info().name, " has no host-visible memory for staging");
  }
  h.coherent = properties_.memoryTypes[type].propertyFlags & coherent;
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = req.size;
  info.memoryTypeIndex = type;
  const char* step = "vkAllocateMemory";
  VkResult result = api_.vkAllocateMemory(context_.device(), &info, nullptr, &h.memory);
  if (result == VK_SUCCESS) {
    step = "vkBindBufferMemory";
    result = api_.vkBindBufferMemory(context_.device(), h.buffer, h.memory, 0);
  }
  void* mapped = nullptr;
  if (result == VK_SUCCESS) {
    step = "vkMapMemory";
    result = api_.vkMapMemory(context_.device(), h.memory, 0, VK_WHOLE_SIZE, 0, &mapped);
  }
  if (result != VK_SUCCESS) {
    release_host(h);
    fail("vulkan: ", readback ? "readback" : "staging", " memory of ", gib(bytes), " on ", context_.info().name, ": ",
         step, ": ", result_name(result), " (", static_cast<int>(result), ")");
  }
  h.mapped = static_cast<unsigned char*>(mapped);
  h.bytes = bytes;
  return h;
}

void Memory::release_host(HostBuffer& h) {
  if (h.buffer) api_.vkDestroyBuffer(context_.device(), h.buffer, nullptr);
  if (h.memory) api_.vkFreeMemory(context_.device(), h.memory, nullptr);  // unmaps
  h = {};
}

void Memory::invalidate(const HostBuffer& h) {
  if (h.coherent) return;
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = h.memory;
  range.size = VK_WHOLE_SIZE;
  check(api_.vkInvalidateMappedMemoryRanges(context_.device(), 1, &range), "vkInvalidateMappedMemoryRanges");
}

}  // namespace difftx::backends::vulkan
