#include "backends/vulkan/stream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace difftx::backends::vulkan {
namespace {

constexpr int kBatches = 3;
constexpr int64_t kStagingPerBatch = 8 << 20;
constexpr int64_t kReadbackBytes = 8 << 20;
constexpr uint32_t kSetsPerBatch = 512;
constexpr uint32_t kDescriptorsPerBatch = kSetsPerBatch * 16;
// A batch is submitted once it holds this many commands: 16 after the device went idle (a wait
// for all work; DIFFTX_VULKAN_FIRST_SUBMIT sets it, 256 for a benchmark's before), doubling with
// each submit to 256, so that the device starts on a step's first commands while the host records
// the rest, and long runs of work pay few submits.
constexpr uint32_t kCommandsPerBatch = 256;

uint32_t first_submit() {
  const char* s = std::getenv("DIFFTX_VULKAN_FIRST_SUBMIT");
  if (!s || !*s) return 16;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  DIFFTX_CHECK(end && *end == 0 && v >= 1 && v <= kCommandsPerBatch, "DIFFTX_VULKAN_FIRST_SUBMIT='", s,
               "': expected a number of commands in [1, ", kCommandsPerBatch, "]");
  return static_cast<uint32_t>(v);
}
constexpr uint32_t kTimestampsPerBatch = 1024;  // profiling

// DIFFTX_VULKAN_BARRIERS: "tracked" (default: a barrier where a command depends on one before)
// or "all" (before every command, as before 2026-11-29: a benchmark's before, or a suspect's check).
bool every_barrier() {
  const char* s = std::getenv("DIFFTX_VULKAN_BARRIERS");
  if (!s || !*s || std::strcmp(s, "tracked") == 0) return false;
  DIFFTX_CHECK(std::strcmp(s, "all") == 0, "DIFFTX_VULKAN_BARRIERS='", s, "': expected 'tracked' or 'all'");
  return true;
}

bool overlap(VkDeviceSize a, VkDeviceSize a_range, VkDeviceSize b, VkDeviceSize b_range) {
  const VkDeviceSize a_end = a_range == VK_WHOLE_SIZE ? VK_WHOLE_SIZE : a + a_range;
  const VkDeviceSize b_end = b_range == VK_WHOLE_SIZE ? VK_WHOLE_SIZE : b + b_range;
  return a < b_end && b < a_end;
}

uint64_t timeout_ns(double seconds) {
  if (seconds > 0) return static_cast<uint64_t>(seconds * 1e9);
  seconds = 120;
  if (const char* s = std::getenv("DIFFTX_VULKAN_TIMEOUT"); s && *s) {
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    DIFFTX_CHECK(end && *end == 0 && v > 0 && v < 1e6, "DIFFTX_VULKAN_TIMEOUT='", s,
                 "': expected a number of seconds in (0, 1e6)");
    seconds = v;
  }
  return static_cast<uint64_t>(seconds * 1e9);
}

}  // namespace

Stream::Stream(Context& context, Memory& memory)
    : context_(context),
      memory_(memory),
      api_(context.api()),
      first_submit_(first_submit()),
      submit_after_(first_submit_),
      timeout_ns_(timeout_ns(context.options().timeout_seconds)),
      every_barrier_(every_barrier()) {
  VkDevice device = context.device();
  if (Profile::wanted()) {
    if (context.has_timestamps())
      profile_ = std::make_unique<Profile>();
    else
      std::fprintf(stderr, "vulkan: %s's compute queue has no timestamps; DIFFTX_VULKAN_PROFILE is ignored\n",
                   context.info().name.c_str());
  }
  batches_.resize(kBatches);
  try {
    staging_ = memory.allocate_host(kBatches * kStagingPerBatch, false);
    readback_ = memory.allocate_host(kReadbackBytes, true);
    for (int i = 0; i < kBatches; ++i) {
      Batch& b = batches_[i];
      VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
      pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
      pool.queueFamilyIndex = context.queue_family();
      check(api_.vkCreateCommandPool(device, &pool, nullptr, &b.pool), "vkCreateCommandPool");
      VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      alloc.commandPool = b.pool;
      alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      alloc.commandBufferCount = 1;
      check(api_.vkAllocateCommandBuffers(device, &alloc, &b.commands), "vkAllocateCommandBuffers");
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerBatch};
      VkDescriptorPoolCreateInfo descriptors{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      descriptors.maxSets = kSetsPerBatch;
      descriptors.poolSizeCount = 1;
      descriptors.pPoolSizes = &size;
      check(api_.vkCreateDescriptorPool(device, &descriptors, nullptr, &b.descriptors), "vkCreateDescriptorPool");
      VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      check(api_.vkCreateFence(device, &fence, nullptr, &b.fence), "vkCreateFence");
      if (profile_) {
        VkQueryPoolCreateInfo queries{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        queries.queryType = VK_QUERY_TYPE_TIMESTAMP;
        queries.queryCount = kTimestampsPerBatch;
        check(api_.vkCreateQueryPool(device, &queries, nullptr, &b.timestamps), "vkCreateQueryPool");
      }
      b.staging_begin = i * kStagingPerBatch;
      b.staging_end = b.staging_begin + kStagingPerBatch;
    }
  } catch (...) {
    close();
    throw;
  }
}

Stream::~Stream() { close(); }

void Stream::close() {
  if (batches_.empty()) return;
  VkDevice device = context_.device();
  if (usable()) {
    try {
      finish();
    } catch (const std::exception& e) {
      if (usable()) failure_ = e.what();  // a batch may still be in flight
    }
  }
  if (profile_) std::fputs(profile_->report(context_.info().name).c_str(), stderr);
  if (!usable()) {
    std::fprintf(stderr, "vulkan: %s: %s; its memory and objects are left for the process's exit to reclaim\n",
                 context_.info().name.c_str(), failure_.c_str());
    batches_.clear();
    return;
  }
  for (Batch& b : batches_) {
    if (b.fence) api_.vkDestroyFence(device, b.fence, nullptr);
    if (b.descriptors) api_.vkDestroyDescriptorPool(device, b.descriptors, nullptr);
    if (b.pool) api_.vkDestroyCommandPool(device, b.pool, nullptr);
    if (b.timestamps) api_.vkDestroyQueryPool(device, b.timestamps, nullptr);
  }
  batches_.clear();
  memory_.release_host(staging_);
  memory_.release_host(readback_);
}

void Stream::check_usable() const {
  context_.check_open();
  DIFFTX_CHECK(!batches_.empty(), "vulkan: ", context_.info().name, "'s stream was closed");
  DIFFTX_CHECK(usable(), "vulkan: ", context_.info().name, " failed earlier (", failure_,
               "); this backend can do no more work");
}

void Stream::failed(std::string why) {
  failure_ = std::move(why);
  fail("vulkan: ", context_.info().name, ": ", failure_, "; this backend can do no more work");
}

Stream::Batch& Stream::open() {
  check_usable();
  Batch& b = batches_[current_];
  if (b.recording) return b;
  if (b.in_flight) wait(b);
  check(api_.vkResetCommandBuffer(b.commands, 0), "vkResetCommandBuffer");
  check(api_.vkResetDescriptorPool(context_.device(), b.descriptors, 0), "vkResetDescriptorPool");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(api_.vkBeginCommandBuffer(b.commands, &begin), "vkBeginCommandBuffer");
  b.staging_head = b.staging_begin;
  b.sets = b.descriptors_used = b.commands_recorded = 0;
  b.recording = true;
  if (profile_) {
    api_.vkCmdResetQueryPool(b.commands, b.timestamps, 0, kTimestampsPerBatch);
    api_.vkCmdWriteTimestamp(b.commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, b.timestamps, 0);
    b.labels.clear();
  }
  return b;
}

Stream::Batch& Stream::room() {
  Batch* b = &open();
  if (profile_ && b->labels.size() + 2 > kTimestampsPerBatch) {
    submit();
    b = &open();
  }
  if (profile_) recording_since_ = Profile::thread_cpu_ns();
  return *b;
}

void Stream::recorded(Batch& b, const char* label) {
  ++b.commands_recorded;
  if (!profile_) return;
  profile_->add_recording(static_cast<double>(Profile::thread_cpu_ns() - recording_since_));
  api_.vkCmdWriteTimestamp(b.commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, b.timestamps,
                           static_cast<uint32_t>(b.labels.size() + 1));
  b.labels.push_back(label);
}

void Stream::read_timestamps(Batch& b) {
  if (b.labels.empty()) return;
  std::vector<uint64_t> ticks(b.labels.size() + 1);
  check(api_.vkGetQueryPoolResults(context_.device(), b.timestamps, 0, static_cast<uint32_t>(ticks.size()),
                                   ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  for (size_t i = 0; i < b.labels.size(); ++i)
    profile_->add(b.labels[i], context_.timestamp_ns(ticks[i], ticks[i + 1]));
  b.labels.clear();
}

void Stream::submit() {
  Batch& b = batches_[current_];
  if (!b.recording || b.commands_recorded == 0) return;
  // A batch that fails to reach the queue is lost with every op recorded in it: the stream fails
  // rather than run later work on what those ops did not write.
  const auto check_step = [&](VkResult result, const char* step) {
    if (result != VK_SUCCESS)
      failed(concat(step, ": ", result_name(result), "; the work recorded since the last submit is lost"));
  };
  b.recording = false;
  check_step(api_.vkEndCommandBuffer(b.commands), "vkEndCommandBuffer");
  check_step(api_.vkResetFences(context_.device(), 1, &b.fence), "vkResetFences");
  VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  info.commandBufferCount = 1;
  info.pCommandBuffers = &b.commands;
  const auto start = std::chrono::steady_clock::now();
  const VkResult result = api_.vkQueueSubmit(context_.queue(), 1, &info, b.fence);
  if (profile_) {
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    profile_->add_submitting(took.count());
  }
  check_step(result, "vkQueueSubmit");
  b.in_flight = true;
  if (profile_) profile_->count_submit();
  current_ = (current_ + 1) % batches_.size();
}

void Stream::wait(Batch& b) {
  const auto start = std::chrono::steady_clock::now();
  const VkResult result = api_.vkWaitForFences(context_.device(), 1, &b.fence, VK_TRUE, timeout_ns_);
  if (profile_)
    profile_->add_blocked(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
  if (result == VK_SUCCESS) {
    b.in_flight = false;
    if (profile_) read_timestamps(b);
    return;
  }
  if (result == VK_TIMEOUT)
    failed(concat("did not finish its work within ", timeout_ns_ / 1e9,
                  " s (DIFFTX_VULKAN_TIMEOUT sets the limit in seconds)"));
  if (result == VK_ERROR_DEVICE_LOST)
    failed("device lost: it stopped (a driver reset, a fault in a shader, or the device was removed)");
  failed(concat("vkWaitForFences: ", result_name(result)));
}

void Stream::finish() {
  check_usable();
  if (profile_) profile_->count_wait();
  submit();
  for (Batch& b : batches_)
    if (b.in_flight) wait(b);
  submit_after_ = first_submit_;
}

double Stream::device_milliseconds(const std::function<void()>& record) {
  VkDevice device = context_.device();
  DIFFTX_CHECK(context_.has_timestamps(), "vulkan: ", context_.info().name, "'s compute queue has no timestamps");
  VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = 2;
  VkQueryPool pool = VK_NULL_HANDLE;
  check(api_.vkCreateQueryPool(device, &info, nullptr, &pool), "vkCreateQueryPool");
  uint64_t ticks[2] = {0, 0};
  try {
    const auto stamp = [&](uint32_t index) {
      Batch& b = open();
      if (index == 0) api_.vkCmdResetQueryPool(b.commands, pool, 0, 2);
      barrier(b);  // everything before has finished
      api_.vkCmdWriteTimestamp(b.commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, index);
      ++b.commands_recorded;
    };
    stamp(0);
    record();
    stamp(1);
    finish();
    check(api_.vkGetQueryPoolResults(device, pool, 0, 2, sizeof ticks, ticks, sizeof(uint64_t),
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
  } catch (...) {
    try {
      finish();  // the recorded timestamps must not outlive their pool
    } catch (const std::exception&) {
    }
    if (usable()) api_.vkDestroyQueryPool(device, pool, nullptr);  // else work may still write it
    throw;
  }
  api_.vkDestroyQueryPool(device, pool, nullptr);
  return context_.timestamp_ns(ticks[0], ticks[1]) / 1e6;
}

void Stream::order(Batch& b, std::span<const Access> accesses) {
  bool depends = every_barrier_ || profile_;
  for (const Access& a : accesses)
    for (const Access& u : unordered_)
      depends = depends ||
                (u.buffer == a.buffer && (u.write || a.write) && overlap(u.offset, u.range, a.offset, a.range));
  if (depends) barrier(b);
  unordered_.insert(unordered_.end(), accesses.begin(), accesses.end());
}

void Stream::barrier(Batch& b) {
  unordered_.clear();
  VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  m.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  m.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                    VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  api_.vkCmdPipelineBarrier(b.commands, stages, stages, 0, 1, &m, 0, nullptr, 0, nullptr);
}

VkDescriptorSet Stream::descriptor_set(Batch& b, const Pipeline& pipeline) {
  VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  info.descriptorPool = b.descriptors;
  info.descriptorSetCount = 1;
  info.pSetLayouts = &pipeline.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(api_.vkAllocateDescriptorSets(context_.device(), &info, &set), "vkAllocateDescriptorSets");
  ++b.sets;
  b.descriptors_used += pipeline.descriptor_count();
  return set;
}

void Stream::dispatch(const Pipeline& pipeline, std::span<const VkDescriptorBufferInfo> buffers, const void* push,
                      uint32_t groups_x, uint32_t groups_y) {
  DIFFTX_CHECK(buffers.size() == pipeline.descriptor_count(), "vulkan: a dispatch binds ", buffers.size(),
               " buffers; its pipeline takes ", pipeline.descriptor_count());
  if (groups_x == 0 || groups_y == 0) return;
  Batch* b = &room();
  if (b->sets + 1 > kSetsPerBatch || b->descriptors_used + pipeline.descriptor_count() > kDescriptorsPerBatch) {
    submit();
    b = &room();
  }
  VkDescriptorSet set = descriptor_set(*b, pipeline);
  std::vector<VkWriteDescriptorSet> writes;
  accesses_.clear();
  size_t at = 0;
  for (uint32_t binding = 0; binding < pipeline.descriptors.size(); ++binding) {
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = binding;
    w.descriptorCount = pipeline.descriptors[binding];
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = buffers.data() + at;
    writes.push_back(w);
    for (uint32_t i = 0; i < w.descriptorCount; ++i, ++at)
      accesses_.push_back({buffers[at].buffer, buffers[at].offset, buffers[at].range, pipeline.writes[binding]});
  }
  api_.vkUpdateDescriptorSets(context_.device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  order(*b, accesses_);
  api_.vkCmdBindPipeline(b->commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  api_.vkCmdBindDescriptorSets(b->commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
  if (pipeline.push_bytes)
    api_.vkCmdPushConstants(b->commands, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, pipeline.push_bytes, push);
  api_.vkCmdDispatch(b->commands, groups_x, groups_y, 1);
  recorded(*b, pipeline.name);
  if (b->commands_recorded >= submit_after_) {
    submit();
    submit_after_ = std::min(2 * submit_after_, kCommandsPerBatch);
  }
}

void Stream::copy(VkBuffer src, int64_t src_offset, VkBuffer dst, int64_t dst_offset, int64_t bytes) {
  if (bytes > 0) record_copy(room(), src, src_offset, dst, dst_offset, bytes);
}

void Stream::record_copy(Batch& b, VkBuffer src, int64_t src_offset, VkBuffer dst, int64_t dst_offset, int64_t bytes) {
  const Access accesses[] = {{src, static_cast<VkDeviceSize>(src_offset), static_cast<VkDeviceSize>(bytes), false},
                             {dst, static_cast<VkDeviceSize>(dst_offset), static_cast<VkDeviceSize>(bytes), true}};
  order(b, accesses);
  const VkBufferCopy region{static_cast<VkDeviceSize>(src_offset), static_cast<VkDeviceSize>(dst_offset),
                            static_cast<VkDeviceSize>(bytes)};
  api_.vkCmdCopyBuffer(b.commands, src, dst, 1, &region);
  recorded(b, "copy");
}

void Stream::fill_zero(VkBuffer buffer, int64_t offset, int64_t bytes) {
  if (bytes <= 0) return;
  Batch& b = room();
  const Access access{buffer, static_cast<VkDeviceSize>(offset), static_cast<VkDeviceSize>(bytes), true};
  order(b, {&access, 1});
  api_.vkCmdFillBuffer(b.commands, buffer, static_cast<VkDeviceSize>(offset), static_cast<VkDeviceSize>(bytes), 0);
  recorded(b, "fill");
}

void Stream::upload(VkBuffer dst, int64_t offset, const void* src, int64_t bytes) {
  const auto* from = static_cast<const unsigned char*>(src);
  while (bytes > 0) {
    // The batch's room first (which may submit it and open the next), then its staging: the copy
    // is recorded in the batch whose staging it reads.
    Batch* b = &room();
    if (b->staging_head == b->staging_end) {
      submit();
      b = &room();
    }
    const int64_t n = std::min(bytes, b->staging_end - b->staging_head);
    std::memcpy(staging_.mapped + b->staging_head, from, static_cast<size_t>(n));
    record_copy(*b, staging_.buffer, b->staging_head, dst, offset, n);
    b->staging_head = std::min(b->staging_end, b->staging_head + (n + 15) / 16 * 16);
    from += n;
    offset += n;
    bytes -= n;
  }
}

void Stream::download(void* dst, VkBuffer src, int64_t offset, int64_t bytes) {
  auto* to = static_cast<unsigned char*>(dst);
  while (bytes > 0) {
    const int64_t n = std::min(bytes, readback_.bytes);
    copy(src, offset, readback_.buffer, 0, n);
    Batch& b = batches_[current_];
    VkMemoryBarrier m{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    m.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    m.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    api_.vkCmdPipelineBarrier(b.commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &m, 0,
                              nullptr, 0, nullptr);
    finish();
    memory_.invalidate(readback_);
    std::memcpy(to, readback_.mapped, static_cast<size_t>(n));
    to += n;
    offset += n;
    bytes -= n;
  }
}

}  // namespace difftx::backends::vulkan
