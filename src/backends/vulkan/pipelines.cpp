#include "backends/vulkan/pipelines.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>

#include "backends/vulkan/spirv_bindings.h"
#include "core/error.h"
#include "core/hash.h"
#include "io/atomic_file.h"

namespace difftx::backends::vulkan {
namespace {

// The cache file: this header, then the driver's cache data (which carries the driver's own
// header with the device's pipelineCacheUUID). A file whose magic, size or hash do not match
// is ignored: a cache is only ever a saving.
struct CacheHeader {
  uint64_t magic = 0x3176706278746664ull;  // "dftxbpv1"
  uint64_t bytes = 0;
  uint64_t hash = 0;
};

std::string hex(const uint8_t* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

std::string statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return std::to_string(s.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return std::to_string(s.value.f64);
    default: return "?";
  }
}

// What the driver reports of the pipeline's executables (VK_KHR_pipeline_executable_properties).
std::string executable_statistics(const Api& api, VkDevice device, VkPipeline pipeline) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  uint32_t n = 0;
  check(api.vkGetPipelineExecutablePropertiesKHR(device, &info, &n, nullptr), "vkGetPipelineExecutablePropertiesKHR");
  std::vector<VkPipelineExecutablePropertiesKHR> executables(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  check(api.vkGetPipelineExecutablePropertiesKHR(device, &info, &n, executables.data()),
        "vkGetPipelineExecutablePropertiesKHR");
  std::string out;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR which{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    which.pipeline = pipeline;
    which.executableIndex = e;
    uint32_t count = 0;
    check(api.vkGetPipelineExecutableStatisticsKHR(device, &which, &count, nullptr),
          "vkGetPipelineExecutableStatisticsKHR");
    std::vector<VkPipelineExecutableStatisticKHR> stats(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    check(api.vkGetPipelineExecutableStatisticsKHR(device, &which, &count, stats.data()),
          "vkGetPipelineExecutableStatisticsKHR");
    out += concat(e ? "; " : "", executables[e].name, ":");
    for (uint32_t i = 0; i < count; ++i) out += concat(" ", stats[i].name, "=", statistic_value(stats[i]));
  }
  return out;
}

std::vector<char> read_cache(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::vector<char> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CacheHeader h;
  if (all.size() < sizeof h) return {};
  std::memcpy(&h, all.data(), sizeof h);
  std::vector<char> data(all.begin() + sizeof h, all.end());
  if (h.magic != CacheHeader{}.magic || h.bytes != data.size() || h.hash != hash64(data.data(), data.size())) return {};
  return data;
}

}  // namespace

std::filesystem::path cache_directory() {
  if (const char* dir = std::getenv("DIFFTX_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "difftx";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "difftx";
  return {};
}

void check_limits(const VkPhysicalDeviceLimits& limits, std::string_view device, std::string_view shader,
                  const WorkgroupNeeds& needs, uint32_t storage_buffers, uint32_t push_bytes) {
  const auto need = [&](const char* limit, uint64_t have, uint64_t needed) {
    DIFFTX_CHECK(needed <= have, "vulkan: device ", device, " cannot run shader '", shader, "': its ", limit, " is ",
                 have, "; the shader needs ", needed);
  };
  need("maxComputeWorkGroupInvocations", limits.maxComputeWorkGroupInvocations, needs.invocations());
  const char* sizes[] = {"maxComputeWorkGroupSize[0]", "maxComputeWorkGroupSize[1]", "maxComputeWorkGroupSize[2]"};
  for (int i = 0; i < 3; ++i) need(sizes[i], limits.maxComputeWorkGroupSize[i], needs.size[i]);
  need("maxComputeSharedMemorySize", limits.maxComputeSharedMemorySize, static_cast<uint64_t>(needs.shared_bytes));
  need("maxPerStageDescriptorStorageBuffers", limits.maxPerStageDescriptorStorageBuffers, storage_buffers);
  need("maxDescriptorSetStorageBuffers", limits.maxDescriptorSetStorageBuffers, storage_buffers);
  need("maxPushConstantsSize", limits.maxPushConstantsSize, push_bytes);
}

uint32_t Pipeline::descriptor_count() const { return std::accumulate(descriptors.begin(), descriptors.end(), 0u); }

Pipelines::Pipelines(Context& context) : context_(context) {
  const VkPhysicalDeviceProperties& p = context.properties();
  const std::filesystem::path dir = cache_directory();
  if (!dir.empty())
    cache_file_ = dir / concat("vulkan-", hex(p.pipelineCacheUUID, VK_UUID_SIZE), "-", p.vendorID, "-", p.deviceID, "-",
                               p.driverVersion, ".bin");
  const std::vector<char> data = cache_file_.empty() ? std::vector<char>{} : read_cache(cache_file_);
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = data.size();
  info.pInitialData = data.empty() ? nullptr : data.data();
  if (context.api().vkCreatePipelineCache(context.device(), &info, nullptr, &cache_) != VK_SUCCESS) {
    info.initialDataSize = 0;  // a driver that rejects the data still gets an empty cache
    info.pInitialData = nullptr;
    check(context.api().vkCreatePipelineCache(context.device(), &info, nullptr, &cache_), "vkCreatePipelineCache");
  }
}

Pipelines::~Pipelines() { close(); }

void Pipelines::close() {
  if (!cache_ || context_.closed()) return;
  try {
    save_cache();
  } catch (const std::exception&) {  // a cache that cannot be written costs compile time, nothing else
  }
  std::lock_guard lock(mutex_);
  const Api& api = context_.api();
  for (auto& [name, p] : pipelines_) {
    api.vkDestroyPipeline(context_.device(), p.pipeline, nullptr);
    api.vkDestroyPipelineLayout(context_.device(), p.layout, nullptr);
    api.vkDestroyDescriptorSetLayout(context_.device(), p.set_layout, nullptr);
  }
  pipelines_.clear();
  api.vkDestroyPipelineCache(context_.device(), cache_, nullptr);
  cache_ = VK_NULL_HANDLE;
}

void Pipelines::save_cache() {
  std::lock_guard lock(mutex_);
  if (!dirty_ || cache_file_.empty()) return;
  const Api& api = context_.api();
  size_t bytes = 0;
  check(api.vkGetPipelineCacheData(context_.device(), cache_, &bytes, nullptr), "vkGetPipelineCacheData");
  std::vector<char> data(bytes);
  check(api.vkGetPipelineCacheData(context_.device(), cache_, &bytes, data.data()), "vkGetPipelineCacheData");
  data.resize(bytes);
  CacheHeader h;
  h.bytes = data.size();
  h.hash = hash64(data.data(), data.size());
  std::filesystem::create_directories(cache_file_.parent_path());
  io::AtomicFileWriter out(cache_file_);
  out.write(&h, sizeof h);
  out.write(data.data(), data.size());
  out.commit();
  dirty_ = false;
}

const Pipeline& Pipelines::get(std::string_view shader, std::vector<uint32_t> descriptors, uint32_t push_bytes) {
  std::lock_guard lock(mutex_);
  context_.check_open();
  if (auto it = pipelines_.find(shader); it != pipelines_.end()) return it->second;
  const ShaderCode* code = nullptr;
  for (const ShaderCode& c : shader_codes())
    if (shader == c.name) code = &c;
  DIFFTX_CHECK(code, "vulkan: this build has no shader '", shader, "'");
  const Api& api = context_.api();
  VkDevice device = context_.device();
  Pipeline p;
  p.name = code->name;
  p.descriptors = std::move(descriptors);
  p.writes = writable_bindings({code->words, code->word_count}, p.descriptors.size());
  p.push_bytes = push_bytes;
  check_limits(context_.properties().limits, context_.info().name, shader,
               workgroup_needs({code->words, code->word_count}), p.descriptor_count(), push_bytes);
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (uint32_t i = 0; i < p.descriptors.size(); ++i)
    bindings.push_back({i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, p.descriptors[i], VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkDescriptorSetLayoutCreateInfo set{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set.bindingCount = static_cast<uint32_t>(bindings.size());
  set.pBindings = bindings.data();
  VkShaderModule module = VK_NULL_HANDLE;
  try {
    check(api.vkCreateDescriptorSetLayout(device, &set, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &p.set_layout;
    layout.pushConstantRangeCount = push_bytes ? 1 : 0;
    layout.pPushConstantRanges = &push;
    check(api.vkCreatePipelineLayout(device, &layout, nullptr, &p.layout), "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = code->word_count * sizeof(uint32_t);
    module_info.pCode = code->words;
    check(api.vkCreateShaderModule(device, &module_info, nullptr, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.layout = p.layout;
    const bool statistics = context_.caps().pipeline_statistics;
    if (statistics) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    const VkResult result = api.vkCreateComputePipelines(device, cache_, 1, &info, nullptr, &p.pipeline);
    if (result != VK_SUCCESS)
      fail("vulkan: the driver could not create the pipeline of shader '", shader, "': ", result_name(result));
    if (statistics) {
      std::string said;
      try {  // a diagnostic: a driver that cannot say costs the statistics, not the pipeline
        said = executable_statistics(api, device, p.pipeline);
      } catch (const std::exception& e) {
        said = e.what();
      }
      std::fprintf(stderr, "vulkan pipeline %s: %s\n", p.name, said.c_str());
    }
  } catch (...) {
    if (module) api.vkDestroyShaderModule(device, module, nullptr);
    if (p.pipeline) api.vkDestroyPipeline(device, p.pipeline, nullptr);
    if (p.layout) api.vkDestroyPipelineLayout(device, p.layout, nullptr);
    if (p.set_layout) api.vkDestroyDescriptorSetLayout(device, p.set_layout, nullptr);
    throw;
  }
  api.vkDestroyShaderModule(device, module, nullptr);
  ++created_;
  dirty_ = true;
  return pipelines_.emplace(std::string(shader), std::move(p)).first->second;
}

}  // namespace difftx::backends::vulkan
