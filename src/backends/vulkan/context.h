// A Vulkan device opened for compute: the instance (with the validation layer when asked), the
// physical device chosen by index, what it can do (features, limits), the logical device and
// one compute queue.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/api.h"

namespace difftx::backends::vulkan {

// What the kernels ask of a device, read once.
struct Capabilities {
  uint32_t api_version = 0;
  bool float16 = false, int8 = false;            // shaderFloat16, shaderInt8 arithmetic
  bool storage16 = false, storage8 = false;      // 16- and 8-bit storage buffer access
  bool float64 = false;                          // shaderFloat64
  bool cooperative_matrix = false;               // GL_NV_cooperative_matrix 16x16x16, fp16 in, fp32 out
  bool emulated_cooperative_matrix = false;      // Options::emulate_cooperative_matrix (the real one then off)
  bool memory_budget = false;                    // VK_EXT_memory_budget
  // The driver's statistics of each pipeline on stderr (registers, spills, instructions: whatever it
  // reports), where Options::pipeline_statistics asked and the device has
  // VK_KHR_pipeline_executable_properties.
  bool pipeline_statistics = false;
  // Decode attention's row alone loads each value once for all of its maps (a GPU), not once per
  // map (a CPU device: lavapipe runs every branch's code, so the shared loop costs it more).
  bool shared_value_loads = true;
  // Decode attention's smallest split-K chunk (shaders/decode_chunk.glsl), a power of two in [32,
  // 128]: 32 on a GPU, where a short row's many workgroups hide memory latency; 128 on a CPU device,
  // where they only add work (lavapipe ran a decode row half as fast at 32). A row's bits depend on
  // it, so on one device they depend on the row's length alone.
  int64_t decode_min_chunk = 32;
  // The most slices the cooperative-matrix GEMM splits a matrix's columns into (ops_matmul.cpp
  // gemm_slices): 4, or 1 for none. A row's bits depend on it, as on the device.
  int64_t gemm_max_slices = 4;
  uint32_t subgroup_size = 0;
  int64_t max_binding_bytes = 0;                 // maxStorageBufferRange
  int64_t binding_alignment = 0;                 // minStorageBufferOffsetAlignment
  int64_t max_buffer_bytes = 0;                  // maxBufferSize (maintenance4), else maxMemoryAllocationSize
  uint32_t max_group_count = 0;                  // maxComputeWorkGroupCount[0] (and [1])
  int64_t device_local_bytes = 0;                // the largest device-local heap
};

struct Options {
  bool validation = false;         // VK_LAYER_KHRONOS_validation, messages collected (validation_messages())
  bool report_validation = false;  // with validation: each message also on stderr as it comes
  bool sync_validation = false;    // with validation: also its synchronization checks (hazards between commands)
  bool cooperative_matrix = true;  // use it where the device has it (DIFFTX_VULKAN_COOPMAT=0 turns it off)
  // The cooperative-matrix GEMM with its fragments emulated in plain code, on any device: its tiling
  // tested where there are no tensor cores (DIFFTX_VULKAN_COOPMAT=emulated).
  bool emulate_cooperative_matrix = false;
  int64_t max_binding_bytes = 0;   // > 0: bind at most this many bytes at once (tests: the split paths)
  std::optional<bool> shared_value_loads;  // Capabilities::shared_value_loads whatever the device (tests)
  // > 0: Capabilities::decode_min_chunk whatever the device (tests; open_device reads
  // DIFFTX_VULKAN_DECODE_CHUNK=32|64|128 into it)
  int64_t decode_min_chunk = 0;
  // > 0: Capabilities::gemm_max_slices (1, 2 or 4; open_device reads DIFFTX_VULKAN_GEMM_SLICES)
  int64_t gemm_max_slices = 0;
  double timeout_seconds = 0;      // > 0: the longest wait for the device (else DIFFTX_VULKAN_TIMEOUT, or 120)
  // Each pipeline's statistics on stderr as it is created (DIFFTX_VULKAN_PIPELINE_STATS=1), where
  // the device reports them (Capabilities::pipeline_statistics).
  bool pipeline_statistics = false;
};

class Context {
 public:
  // index: the device's place in list_devices(), or -1 for the best one (a discrete GPU first,
  // then an integrated one, a virtual one, a CPU). Error naming the devices there are when
  // index is out of range, and what is missing when there is no loader or no device.
  Context(int index, const Options& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Api& api() const { return api_; }
  VkDevice device() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  int index() const { return index_; }  // the device's place in list_devices()
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  const Capabilities& caps() const { return caps_; }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const Options& options() const { return options_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }
  // Whether the compute queue writes timestamps; the nanoseconds from one of them to a later one.
  bool has_timestamps() const { return timestamp_bits_ > 0 && properties_.limits.timestampPeriod > 0; }
  double timestamp_ns(uint64_t from, uint64_t to) const;

  // Destroys the device, the messenger and the instance, as far as they were created; again,
  // nothing. Everything made on the device must be destroyed first. abandon: the device may still
  // run work (a wait timed out, it was lost): only the messenger is destroyed, the device is
  // neither waited for nor destroyed, and the process's exit reclaims it.
  void close(bool abandon = false);
  bool closed() const { return closed_; }
  // Error "vulkan: <device> was closed (the process is exiting)" once close() ran.
  void check_open() const;

  // The validation layer's errors and warnings so far (empty without validation).
  std::vector<std::string> validation_messages() const;
  void add_validation_message(std::string message);

 private:
  Api api_;
  Options options_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  int index_ = -1;
  VkDevice device_ = VK_NULL_HANDLE;
  std::atomic<bool> closed_ = false;  // read without the backend's lock (Memory::resolve)
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t timestamp_bits_ = 0;
  VkPhysicalDeviceProperties properties_{};
  Capabilities caps_;
  DeviceInfo info_;
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

// Every Vulkan device of this machine, in the order `vulkan:N` counts them; empty, with the
// reason in *why, when there is no loader or no device.
std::vector<DeviceInfo> list_devices(std::string* why = nullptr);

}  // namespace difftx::backends::vulkan
