// Compute pipelines, created on first use from the SPIR-V compiled into the binary
// (shaders/shaders.cmake), through one VkPipelineCache that persists under the user's cache
// directory: creating a pipeline on lavapipe is an LLVM compile, so a short command compiles only
// the shaders it runs, and a second run finds them compiled where the driver keeps its cache.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/context.h"
#include "backends/vulkan/spirv_bindings.h"

namespace difftx::backends::vulkan {

// One shader's SPIR-V, as the build embedded it.
struct ShaderCode {
  const char* name;
  const uint32_t* words;
  size_t word_count;
};
std::span<const ShaderCode> shader_codes();  // generated: every shader of shaders.cmake

// What a shader binds: set 0, binding i an array of descriptors[i] storage buffers; push
// constants of push_bytes.
struct Pipeline {
  const char* name = "";  // the shader's
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  std::vector<uint32_t> descriptors;
  std::vector<bool> writes;  // per binding: whether the shader may write it (spirv_bindings.h)
  uint32_t push_bytes = 0;
  uint32_t descriptor_count() const;
};

class Pipelines {
 public:
  explicit Pipelines(Context& context);
  ~Pipelines();  // close()
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // The shader's pipeline, created on first use. Error naming the shader when the build has no
  // such shader, the device's limits are below what it needs (check_limits), or the driver fails
  // to create it; and once the context is closed.
  const Pipeline& get(std::string_view shader, std::vector<uint32_t> descriptors, uint32_t push_bytes);
  int64_t created() const { return created_; }
  const std::filesystem::path& cache_file() const { return cache_file_; }
  void save_cache();
  // Saves the cache when new pipelines were created, then destroys every pipeline and the cache;
  // again, or once the context is closed (abandoned with the device: VulkanBackend::close), nothing.
  void close();

 private:
  Context& context_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::filesystem::path cache_file_;
  std::mutex mutex_;
  std::map<std::string, Pipeline, std::less<>> pipelines_;
  int64_t created_ = 0;
  bool dirty_ = false;
};

// Error naming the device, the limit, what the device has and what `shader` needs, where the
// shader asks more than the device allows: its workgroup (size, shared memory), its storage
// buffers, its push constants.
void check_limits(const VkPhysicalDeviceLimits& limits, std::string_view device, std::string_view shader,
                  const WorkgroupNeeds& needs, uint32_t storage_buffers, uint32_t push_bytes);

// The directory difftx keeps caches in: $DIFFTX_CACHE_DIR, else $XDG_CACHE_HOME/difftx, else
// ~/.cache/difftx; empty when none can be named.
std::filesystem::path cache_directory();

}  // namespace difftx::backends::vulkan
