// Device memory: one buffer per allocation (device-local where the device has such memory),
// named by device addresses (backends/device_ptr.h) that encode the allocation's id and an
// offset, decoded into (buffer, offset) when an op binds them.
#pragma once
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "backends/vulkan/context.h"

namespace difftx::backends::vulkan {

// Address bits: the tag (bit 63), the allocation id (bits 40-62), the byte offset (bits 0-39).
constexpr int kOffsetBits = 40;
constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
constexpr uint64_t kMaxAllocationId = (uint64_t{1} << (63 - kOffsetBits)) - 1;

// An address decoded: the allocation's buffer, the offset into it, the allocation's size.
struct Resolved {
  VkBuffer buffer = VK_NULL_HANDLE;
  int64_t offset = 0;
  int64_t size = 0;
};

class Memory {
 public:
  explicit Memory(Context& context);
  ~Memory();  // close()
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  // A device-local buffer of at least `bytes` (rounded up to 256), contents unspecified; its
  // address. Error naming the bytes asked and free when it does not fit, and once the context is
  // closed.
  uint64_t allocate(int64_t bytes);
  void release(uint64_t address);
  // Every allocation released (the host buffers are their owners' to release); again, or once the
  // context is closed (abandoned with the device: VulkanBackend::close), nothing.
  void close();
  // The allocation `address` points into, checked: [address, address + bytes) must lie inside it.
  Resolved resolve(uint64_t address, int64_t bytes, const char* what) const;
  // Bytes the device has free for allocations (VK_EXT_memory_budget where the device has it,
  // else its device-local heap less what this backend holds).
  int64_t free_bytes() const;
  int64_t used_bytes() const;

  // A host-visible buffer (staging): coherent memory, mapped for the buffer's life.
  struct HostBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    unsigned char* mapped = nullptr;
    int64_t bytes = 0;
    bool coherent = true;
  };
  HostBuffer allocate_host(int64_t bytes, bool readback);
  void release_host(HostBuffer& buffer);
  void invalidate(const HostBuffer& buffer);  // before the host reads what the device wrote (non-coherent memory)

 private:
  struct Allocation {
    VkBuffer buffer;
    VkDeviceMemory memory;
    int64_t bytes;
  };
  uint32_t memory_type(uint32_t allowed, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const;
  VkBuffer create_buffer(int64_t bytes, VkMemoryRequirements* requirements);

  Context& context_;
  const Api& api_;
  VkPhysicalDeviceMemoryProperties properties_{};
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Allocation> allocations_;
  uint64_t next_id_ = 1;
  int64_t used_ = 0;
};

}  // namespace difftx::backends::vulkan
